#!/usr/bin/env bash
# The build every suite runs from: --build-tests with --traits Postgres,Server in .build-full, failing on any warning
# in Sources or Tests. Used by scripts/test-all.sh (`make test`), test-postgres.sh, test-server.sh and `make api`.
# With the index store: on Linux, `--build-tests` discovers tests from it (with --disable-index-store the build fails
# on a new test file's missing unit). $ROUTEKIT_BUILD_FLAGS adds flags (CI: no debug information, see .ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
# shellcheck disable=SC2086 # $ROUTEKIT_BUILD_FLAGS holds several flags
$SWIFT build --build-tests --traits Postgres,Server --scratch-path .build-full ${ROUTEKIT_BUILD_FLAGS:-} 2>&1 | tee .build-full-warnings.log
if grep -E "^$PWD/(Sources|Tests)/.*warning:" .build-full-warnings.log; then
    echo "error: the build has warnings (see above)"
    rm -f .build-full-warnings.log
    exit 1
fi
rm -f .build-full-warnings.log
