#!/usr/bin/env bash
# Runs the test bundle of a build as it is, with swift-testing's own options (--filter, --skip: regular expressions,
# as `swift test` takes them):
#
#   scripts/run-tests.sh SCRATCH [--filter RE] [--skip RE]…
#
# What `swift test --skip-build --scratch-path SCRATCH …` does, without planning the whole package again first (about
# 11 s a run in CI), in a test folder of its own (scripts/with-test-tmpdir.sh). The bundle must have been built
# (`swift build --build-tests`); the tests find `routekit` beside it.
set -euo pipefail
cd "$(dirname "$0")/.."
SCRATCH=${1:?usage: scripts/run-tests.sh SCRATCH [--filter RE] [--skip RE]…}
shift
BUNDLE=$SCRATCH/debug/RouteKitPackageTests.xctest
[ -x "$BUNDLE" ] || { echo "no test bundle at $BUNDLE: build with swift build --build-tests first" >&2; exit 2; }
export NO_COLOR=1
exec scripts/with-test-tmpdir.sh "$BUNDLE" --testing-library swift-testing "$@"
