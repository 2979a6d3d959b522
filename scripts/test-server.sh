#!/usr/bin/env bash
# The HTTP service's suites (`routekit serve`, `routekit tokens`): builds with `--traits Postgres,Server` in
# .build-full (nothing to do when scripts/test-postgres.sh built it already), then runs them: router tests of every
# endpoint, live-server tests with a real HTTP client (event streams, long-polls), and the CLI as a child process.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
SCRATCH=.build-full
TRAITS=Postgres,Server
$SWIFT build --build-tests --traits $TRAITS --scratch-path $SCRATCH 2>&1 | tee .build-full-warnings.log
if grep -E "^$PWD/(Sources|Tests)/.*warning:" .build-full-warnings.log; then
    echo "error: the server build has warnings (see above)"
    rm -f .build-full-warnings.log
    exit 1
fi
rm -f .build-full-warnings.log
$SWIFT test --skip-build --traits $TRAITS --scratch-path $SCRATCH --filter RouteKitServerTests
