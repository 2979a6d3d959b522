#!/usr/bin/env bash
# The suites of code that runs on several threads under the thread sanitizer (in .build-tsan, built with --traits
# Server): the store and its feed, the parallel import (archives' entries, the GPX reader threads, `import --jobs`),
# the processing pipeline and `smooth`'s workers, `changes --follow`, and the HTTP service. Single-threaded readers
# (FIT, TCX, Health) and the other CLI suites run in `make test` only (their memory errors are the fuzzers' job): under
# the sanitizer the whole first group took 6.6 minutes, the FIT corpus and fail-case replays the longest (CI dry run,
# 2026-11-27). It fails on the first report (TSAN_OPTIONS=halt_on_error=1: a
# race in the test process or in a routekit child, `routekit serve` included, ends it non-zero). The PostgreSQL suites are not part of it (the build has
# no Postgres trait). The HTTP service's suites run after the others, not beside them, and without the two suites
# whose checks are about time (a header timeout cut within 2.5 s, a proxied event within 1 s of its commit): the
# sanitizer makes the server several times slower (CI, 2026-11-24: the proxied event after 1.23 s). `make test` runs
# them, on the normal build.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
export TSAN_OPTIONS="halt_on_error=1 ${TSAN_OPTIONS:-}"
$SWIFT build --build-tests --sanitize=thread --traits Server --scratch-path .build-tsan
scripts/with-test-tmpdir.sh $SWIFT test --skip-build --sanitize=thread --traits Server --scratch-path .build-tsan \
    --filter 'RouteKitSQLiteTests|RouteKitImportTests|ReaderThreadTests|PipelineTests|ImportJobsCLITests|ChangesCLITests|SmoothCLITests'
scripts/with-test-tmpdir.sh $SWIFT test --skip-build --sanitize=thread --traits Server --scratch-path .build-tsan --filter RouteKitServerTests \
    --skip 'NginxTests|ServerTimeoutTests'
