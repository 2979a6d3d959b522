#!/usr/bin/env bash
# The build every suite runs from: --build-tests with --traits Postgres,Server,Client in .build-full, failing on any warning
# in Sources or Tests. Used by scripts/test-all.sh (`make test`), test-postgres.sh, test-server.sh and `make api`.
# With the index store: on Linux, `--build-tests` discovers tests from it (with --disable-index-store the build fails
# on a new test file's missing unit). $ROUTEKIT_BUILD_FLAGS adds flags (CI: no debug information, see .ci/run).
# $ROUTEKIT_FULL_TRAITS and $ROUTEKIT_FULL_SCRATCH build other traits in another folder the same way
# (scripts/test-client.sh: the `Client` trait too, in .build-client).
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
TRAITS=${ROUTEKIT_FULL_TRAITS:-Postgres,Server,Client}
SCRATCH=${ROUTEKIT_FULL_SCRATCH:-.build-full}
LOG=$SCRATCH-warnings.log
# shellcheck disable=SC2086 # $ROUTEKIT_BUILD_FLAGS holds several flags
$SWIFT build --build-tests --traits "$TRAITS" --scratch-path "$SCRATCH" ${ROUTEKIT_BUILD_FLAGS:-} 2>&1 | tee "$LOG"
# A warning inside a macro's expansion (#expect) names no file on its line: it is ours too (no dependency's tests build).
if grep -E "^($PWD/(Sources|Tests)/|macro expansion ).*warning:" "$LOG"; then
    echo "error: the build has warnings (see above)"
    rm -f "$LOG"
    exit 1
fi
rm -f "$LOG"
