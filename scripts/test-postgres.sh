#!/usr/bin/env bash
# The PostgreSQL suites: builds with `--traits Postgres,Server,Client` (in .build-full, shared with scripts/test-server.sh,
# so the default build is not rebuilt and SwiftNIO is built once for both), then runs them against $ROUTEKIT_TEST_POSTGRES, or against a throwaway cluster started here
# (scripts/pg-test-cluster.sh; needs Debian's `postgresql` package) and stopped at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
SCRATCH=.build-full
TRAITS=Postgres,Server,Client
if [ -z "${ROUTEKIT_TEST_POSTGRES:-}" ]; then
    dir=$(mktemp -d /tmp/routekit-pg.XXXXXX)
    ROUTEKIT_TEST_POSTGRES=$(ROUTEKIT_PG_FSYNC=off scripts/pg-test-cluster.sh start "$dir")
    export ROUTEKIT_TEST_POSTGRES ROUTEKIT_TEST_POSTGRES_DIR=$dir
    trap 'scripts/pg-test-cluster.sh stop "$dir"' EXIT
fi
SWIFT=$SWIFT scripts/build-full.sh
# Everything that touches PostgreSQL, except the test that restarts the server under the others.
ROUTEKIT_TEST_POSTGRES_DIR= scripts/with-test-tmpdir.sh $SWIFT test --skip-build --traits $TRAITS --scratch-path $SCRATCH \
    --filter Postgres --skip PostgresRestartTests
if [ -n "${ROUTEKIT_TEST_POSTGRES_DIR:-}" ]; then
    scripts/with-test-tmpdir.sh $SWIFT test --skip-build --traits $TRAITS --scratch-path $SCRATCH --filter PostgresRestartTests
else
    echo "PostgresRestartTests skipped: ROUTEKIT_TEST_POSTGRES_DIR (a cluster the test may restart) is not set"
fi
