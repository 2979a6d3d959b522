#!/usr/bin/env bash
# Two `routekit serve` processes on one PostgreSQL store (issue 15: "several serve processes on one PostgreSQL serve
# the same feed"), under serve-load.py's follow load: the followers alternate between the two servers, and so do the
# uploads, so half of what every follower must see was committed by the other process (woken by PostgreSQL's
# NOTIFY, not by a commit in its own process).
#
#   serve-two.sh URL [RUNS] [FOLLOWERS] [ROUTEKIT]
#
#   URL        a PostgreSQL database (a new one: the tokens are made in it), e.g. from scripts/pg-test-cluster.sh
#   RUNS       runs of serve-load.py follow against the same two servers (default 3)
#   FOLLOWERS  event streams, half on each server (default 500); 4 clients upload 25 files each
#   ROUTEKIT   routekit built with the Postgres and Server traits, release (default .build-release-full/release/routekit:
#              `swift build -c release --traits Postgres,Server --product routekit --scratch-path .build-release-full`)
set -euo pipefail
URL=${1:?usage: serve-two.sh URL [RUNS] [FOLLOWERS] [ROUTEKIT]}
RUNS=${2:-3}
FOLLOWERS=${3:-500}
RK=${4:-.build-release-full/release/routekit}
HERE=$(cd "$(dirname "$0")" && pwd)
[ -x "$RK" ] || { echo "serve-two.sh: $RK not found (see the usage at the top)" >&2; exit 2; }
DIR=$(mktemp -d /tmp/routekit-serve-two.XXXXXX)
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$DIR"' EXIT
RW=$("$RK" tokens create --store "$URL" --source phone --scope read,write 2>/dev/null)
ulimit -n $((FOLLOWERS * 2 + 1024))
PORTS=()
for n in 1 2; do
    "$RK" serve --store "$URL" --port 0 --log-level warning --max-streams-per-token $((FOLLOWERS * 2)) \
        >"$DIR/serve$n.log" 2>&1 &
    PIDS+=($!)
    for _ in $(seq 100); do grep -q 'listening on' "$DIR/serve$n.log" && break; sleep 0.1; done
    PORTS+=("$(grep -o 'http://127.0.0.1:[0-9]*' "$DIR/serve$n.log" | head -1 | sed 's/.*://')")
done
echo "servers on ports ${PORTS[*]}"
status=0
for r in $(seq "$RUNS"); do
    echo "== run $r"
    python3 "$HERE/serve-load.py" follow "http://127.0.0.1:${PORTS[0]}" "$RW" --also "http://127.0.0.1:${PORTS[1]}" \
        --followers "$FOLLOWERS" --uploaders 4 --uploads 25 || status=1
done
for n in 1 2; do
    printf 'server %s: RSS %.1f MiB\n' "$n" "$(awk '/VmRSS/{print $2 / 1024}' "/proc/${PIDS[$((n - 1))]}/status")"
done
exit $status
