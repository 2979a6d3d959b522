#!/usr/bin/env bash
# Every suite from one build (`make test`): `--traits Postgres,Server,Client` in .build-full, built with a warnings check,
# then the tests of everything but the HTTP service, then of the HTTP service's suites. With $ROUTEKIT_TEST_POSTGRES the PostgreSQL suites run against it (they
# skip, saying so, without it), and with $ROUTEKIT_TEST_POSTGRES_DIR too (a cluster the test may restart, as
# scripts/pg-test-cluster.sh makes) the restart test runs last, alone.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
SCRATCH=.build-full
TRAITS=Postgres,Server,Client
SWIFT=$SWIFT scripts/build-full.sh
[ -n "${ROUTEKIT_TEST_POSTGRES:-}" ] || echo "PostgreSQL suites skipped: no server given (set" \
    "ROUTEKIT_TEST_POSTGRES=postgres://…, or run 'make test-postgres', which starts a throwaway cluster)"
# The HTTP service's suites run in a second process, not beside the others: some check how soon an event arrives
# (through nginx, within 5 s), which the whole suite's load on 2 cores delayed past that (CI dry run, 2026-11-27).
# The test bundle is run as it is (`swift test --skip-build` plans the whole package again first: 11 s a run in CI).
# The PostgreSQL store's suites run in a process of their own too: their thousands of round trips each wait for one of
# the test process's two threads, which the corpus suites kept busy past the suites' hang guards (2026-11-28: the
# server sat "idle in transaction", waiting for the test process, 120 s).
ROUTEKIT_TEST_POSTGRES_DIR= scripts/run-tests.sh $SCRATCH --skip PostgresRestartTests --skip RouteKitServerTests \
    --skip RouteKitPostgresTests
ROUTEKIT_TEST_POSTGRES_DIR= scripts/run-tests.sh $SCRATCH --filter RouteKitPostgresTests
ROUTEKIT_TEST_POSTGRES_DIR= scripts/run-tests.sh $SCRATCH --filter RouteKitServerTests
if [ -n "${ROUTEKIT_TEST_POSTGRES:-}" ] && [ -n "${ROUTEKIT_TEST_POSTGRES_DIR:-}" ]; then
    scripts/run-tests.sh $SCRATCH --filter PostgresRestartTests
fi
