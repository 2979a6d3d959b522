#!/usr/bin/env bash
# Runs a command with TMPDIR set to a folder of its own under /tmp and removes that folder afterwards, whatever the
# command's outcome: the stores, uploads, archives and child servers the test suites make in the temporary folder
# (thousands of files per run) do not pile up in /tmp. The command's exit status is kept. SIGTERM or SIGINT (a CI
# timeout, ^C) is passed on to the command, and the folder goes only once the command has ended. Nested calls reuse
# the folder of the outer one.
set -uo pipefail
if [ -n "${ROUTEKIT_TEST_TMPDIR:-}" ]; then exec "$@"; fi
base=${TMPDIR:-/tmp}
dir=$(mktemp -d "$base/routekit-test-run.XXXXXX") || exit 1
export TMPDIR=$dir ROUTEKIT_TEST_TMPDIR=$dir
"$@" &
child=$!
trap 'kill -TERM "$child" 2>/dev/null' TERM INT
wait "$child"
status=$?
# A signal ends `wait` early: wait again until the command itself has ended.
while kill -0 "$child" 2>/dev/null; do
    wait "$child"
    status=$?
done
rm -rf "$dir"
exit "$status"
