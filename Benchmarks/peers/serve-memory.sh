#!/usr/bin/env bash
# Memory of `routekit serve` across rounds of abrupt follower disconnects (issue 15's "1,000 abrupt follower
# disconnects: open streams back to 0 within 5 s, RSS within 10 % of before").
#
#   [STORE=URL] serve-memory.sh [ROUNDS] [FOLLOWERS] [WAIT] [ROUTEKIT]
#
#   ROUNDS     rounds of FOLLOWERS event streams opened, caught up, then reset at once (default 8)
#   FOLLOWERS  default 1000
#   WAIT       seconds after each round before memory is read (default 20: past the server's delayed trims)
#   ROUTEKIT   a routekit built with the Server trait, release (default .build-release-server/release/routekit:
#              `swift build -c release --traits Server --product routekit --scratch-path .build-release-server`)
#
#   STORE      the store to serve (a PostgreSQL URL needs ROUTEKIT built with the Postgres trait too); default a new
#              SQLite file in a temporary folder, removed at the end
#
# Prints the server's RSS, anonymous memory and threads (from /proc) when idle, then after a warm-up round of 10
# followers (the code paths and allocator pools a stream uses, touched once), then per round serve-load.py's line
# (open streams back to 0, and how fast) and the same figures WAIT seconds later.
set -euo pipefail
ROUNDS=${1:-8}
FOLLOWERS=${2:-1000}
WAIT=${3:-20}
RK=${4:-.build-release-server/release/routekit}
HERE=$(cd "$(dirname "$0")" && pwd)
[ -x "$RK" ] || { echo "serve-memory.sh: $RK not found (see the usage at the top)" >&2; exit 2; }
DIR=$(mktemp -d /tmp/routekit-serve-memory.XXXXXX)
trap 'kill $PID 2>/dev/null || true; rm -rf "$DIR"' EXIT
S=${STORE:-$DIR/store.sqlite}
RW=$("$RK" tokens create --store "$S" --source phone --scope read,write 2>/dev/null)
AD=$("$RK" tokens create --store "$S" --source ops --scope read,admin 2>/dev/null)
ulimit -n $((FOLLOWERS * 2 + 1024))
"$RK" serve --store "$S" --port 0 --log-level warning --max-streams-per-token $((FOLLOWERS * 2)) >"$DIR/serve.log" 2>&1 &
PID=$!
for _ in $(seq 50); do grep -q 'listening on' "$DIR/serve.log" && break; sleep 0.1; done
PORT=$(grep -o 'http://127.0.0.1:[0-9]*' "$DIR/serve.log" | head -1 | sed 's/.*://')
state() {
    printf '%-9s RSS %6.1f MiB  anonymous %6.1f MiB  threads %s\n' "$1" \
        "$(awk '/VmRSS/{print $2 / 1024}' /proc/$PID/status)" \
        "$(awk '/^Anonymous/{s += $2} END {print s / 1024}' /proc/$PID/smaps)" "$(ls /proc/$PID/task | wc -l)"
}
state idle
python3 "$HERE/serve-load.py" disconnect "http://127.0.0.1:$PORT" "$RW" --admin "$AD" --followers 10 >/dev/null
sleep "$WAIT"
state warm
for r in $(seq "$ROUNDS"); do
    python3 "$HERE/serve-load.py" disconnect "http://127.0.0.1:$PORT" "$RW" --admin "$AD" --followers "$FOLLOWERS" | tail -1
    sleep "$WAIT"
    state "round $r"
done
