#!/usr/bin/env bash
# The store, feed, pipeline, import (the GPX reader threads too), CLI and HTTP service suites under the thread
# sanitizer (in .build-tsan, built with --traits Server), failing on the first report (TSAN_OPTIONS=halt_on_error=1: a
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
    --filter 'RouteKitSQLiteTests|RouteKitProcessingTests|RouteKitImportTests|RouteKitFITTests|RoutekitCLITests|ReaderThreadTests'
scripts/with-test-tmpdir.sh $SWIFT test --skip-build --sanitize=thread --traits Server --scratch-path .build-tsan --filter RouteKitServerTests \
    --skip 'NginxTests|ServerTimeoutTests'
