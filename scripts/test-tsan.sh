#!/usr/bin/env bash
# The store, feed, pipeline, import, CLI and HTTP service suites under the thread sanitizer (in .build-tsan, built with
# --traits Server), failing on the first report (TSAN_OPTIONS=halt_on_error=1: a race in the test process or in a
# routekit child, `routekit serve` included, ends it non-zero). The PostgreSQL suites are not part of it (the build has
# no Postgres trait). The HTTP service's suites run after the others, not beside them: some check what a client sees
# within a second (a header timeout, a proxied event), which a process running every other suite under the sanitizer
# on 2 cores cannot promise.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
export TSAN_OPTIONS="halt_on_error=1 ${TSAN_OPTIONS:-}"
$SWIFT build --build-tests --sanitize=thread --traits Server --scratch-path .build-tsan
$SWIFT test --skip-build --sanitize=thread --traits Server --scratch-path .build-tsan \
    --filter 'RouteKitSQLiteTests|RouteKitProcessingTests|RouteKitImportTests|RouteKitFITTests|RoutekitCLITests'
$SWIFT test --skip-build --sanitize=thread --traits Server --scratch-path .build-tsan --filter RouteKitServerTests
