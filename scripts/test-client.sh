#!/usr/bin/env bash
# The Swift client's suites (`make test-client`): builds with `--traits Postgres,Server,Client` in .build-client
# (scripts/build-full.sh: a warning in Sources or Tests fails; the first build also builds swift-openapi-generator and
# runs it on Sources/RouteKitServer/openapi.yaml), then runs RouteKitClientTests: RouteKitClient against a live
# `routekit serve`, routekit-client-demo killed and resumed as child processes, and the DocC examples.
# ROUTEKIT_DOCS=1 then builds the documentation from that build (scripts/docs.sh, RouteKitClient's catalog included).
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
SCRATCH=.build-client
ROUTEKIT_FULL_TRAITS=Postgres,Server,Client ROUTEKIT_FULL_SCRATCH=$SCRATCH SWIFT=$SWIFT scripts/build-full.sh
scripts/run-tests.sh $SCRATCH --filter 'RouteKitClientTests|ModuleLayoutTests'
if [ "${ROUTEKIT_DOCS:-}" = 1 ]; then
    ROUTEKIT_DOCS_SCRATCH=$SCRATCH scripts/docs.sh
fi
