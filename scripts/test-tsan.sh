#!/usr/bin/env bash
# The thread sanitizer over the tests whose code runs on several threads (in .build-tsan, built with --traits Server):
# the GPX reader threads, the processing pipeline's workers, `import --jobs`, `changes --follow`, `smooth`'s workers
# over the store, two SQLite handles writing at once, the commit poller's thread, the store conformance suite (the
# GRDB pool's readers and writer), the parallel and read-ahead import of archives and long files, and the HTTP service.
# Tests of single-threaded reading (the corpora through FIT, TCX, Health, GPX and zip readers) run in `make test` only:
# under the sanitizer they took most of its time (all suites but the server's: about 10 minutes, measured here on
# 2026-11-27), and their memory errors are the fuzzers' job. It fails on the first report (TSAN_OPTIONS=halt_on_error=1: a race in the
# test process or in a routekit child, `routekit serve` included, ends it non-zero). The PostgreSQL suites are not
# part of it (the build has no Postgres trait). The HTTP service's suites run after the others, not beside them, and
# without the two suites whose checks are about time (a header timeout cut within 2.5 s, a proxied event within 1 s
# of its commit): the sanitizer makes the server several times slower (CI, 2026-11-24: the proxied event after
# 1.23 s). `make test` runs them, on the normal build.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
# Every report, of the test process or of a routekit child (`routekit serve` included), goes to a file of its own in
# $reports: a child's stderr may go to a log no one prints.
reports=$(mktemp -d /tmp/routekit-tsan.XXXXXX)
export TSAN_OPTIONS="halt_on_error=1 log_path=$reports/report ${TSAN_OPTIONS:-}"
# check_reports: fails, printing them, when the sanitizer reported anything.
check_reports() {
    if compgen -G "$reports/report*" >/dev/null; then
        cat "$reports"/report*
        echo "error: ThreadSanitizer reported (above)" >&2
        exit 1
    fi
}
# --own: the sanitizer on RouteKit's own targets only, in the --traits Postgres,Server,Client build (.build-full), whose
# dependencies are reused (ROUTEKIT_TSAN_OWN, Package.swift): what CI runs, after everything else that uses that
# build (it leaves RouteKit's objects instrumented; the next plain build rebuilds them). Without it: every target,
# dependencies included, with --sanitize=thread in .build-tsan.
if [ "${1:-}" = --own ]; then
    shift
    export ROUTEKIT_TSAN_OWN=1
    TRAITS=Postgres,Server,Client SCRATCH=.build-full SANITIZE=""
else
    TRAITS=Server SCRATCH=.build-tsan SANITIZE=--sanitize=thread
fi
# shellcheck disable=SC2086 # $ROUTEKIT_BUILD_FLAGS holds several flags (CI: no debug information, see .ci/run)
$SWIFT build --build-tests $SANITIZE --traits $TRAITS --scratch-path $SCRATCH ${ROUTEKIT_BUILD_FLAGS:-}
# --build-only: the build alone.
[ "${1:-}" = --build-only ] && exit 0
concurrent='BlockingExecutorTests|ReaderThreadTests|PipelineTests|ImportJobsCLITests|ChangesCLITests|SmoothStoreCLITests'
concurrent+='|SQLiteStoreTests/concurrentWriters|SQLiteFeedTests/commitPollerThread|SQLiteConformanceTests/conformance\('
concurrent+='|ImportTests/readAheadOfLongFiles|ArchiveImportTests/(parallelEntries|readAhead)\('
scripts/run-tests.sh $SCRATCH --filter "$concurrent" || { check_reports; exit 1; }
check_reports
# Nor the suites that check rules, settings and the page rather than threads (the authorization matrix, scopes, serve's
# settings, the browser test, the standardwebhooks receiver's timeouts): their requests take the paths the live suites
# take at once, and under the sanitizer they cost CI minutes.
#
# Here the verdict is the sanitizer's reports alone: these suites talk to servers and receivers with real deadlines
# (webhook timeouts, an expiry, a client's read timeout), which the sanitizer's slowdown on 2 cores overran in CI
# (2026-11-28: 11 such failures, no report). `make test` runs the same suites uninstrumented and fails on any of them.
status=0
scripts/run-tests.sh $SCRATCH --filter RouteKitServerTests \
    --skip 'NginxTests|ServerTimeoutTests|AuthorizationMatrixTests|ScopeServerTests|ServeSettingsTests|WebBrowserTests|WebhookReceiverCLITests' ||
    status=$?
check_reports
if [ "$status" -ne 0 ]; then
    echo "warning: the HTTP service's suites failed under the sanitizer (exit $status) without a report: timing, see above" >&2
fi
rm -rf "$reports"
