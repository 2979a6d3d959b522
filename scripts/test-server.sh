#!/usr/bin/env bash
# The HTTP service's suites (`routekit serve`, `routekit tokens`): builds with `--traits Postgres,Server,Client` in
# .build-full (nothing to do when scripts/test-postgres.sh built it already), then runs them: router tests of every
# endpoint, live-server tests with a real HTTP client (event streams, long-polls), and the CLI as a child process.
# With ROUTEKIT_SERVER_SKIP_BUILD=1 (make test, right after scripts/test-postgres.sh built the same thing) it does not
# build again: `swift build` after `swift test` in the same scratch folder recompiles a few hundred files.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
SCRATCH=.build-full
TRAITS=Postgres,Server,Client
if [ "${ROUTEKIT_SERVER_SKIP_BUILD:-}" != 1 ]; then
    SWIFT=$SWIFT scripts/build-full.sh
fi
scripts/with-test-tmpdir.sh $SWIFT test --skip-build --traits $TRAITS --scratch-path $SCRATCH --filter RouteKitServerTests
