#!/usr/bin/env bash
# The store, feed, pipeline, import and CLI suites under the thread sanitizer (in .build-tsan), failing on the
# first report (TSAN_OPTIONS=halt_on_error=1: a race in the test process or in a routekit child ends it non-zero).
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
export TSAN_OPTIONS="halt_on_error=1 ${TSAN_OPTIONS:-}"
$SWIFT build --build-tests --sanitize=thread --scratch-path .build-tsan
$SWIFT test --skip-build --sanitize=thread --scratch-path .build-tsan \
    --filter 'RouteKitSQLiteTests|RouteKitProcessingTests|RouteKitImportTests|RouteKitFITTests|RoutekitCLITests'
