#!/usr/bin/env bash
# Fan-out by person (issue 28, item 5): `serve-load.py people` against a new `routekit serve` on a new SQLite store,
# and, when ROUTEKIT_PG_URL is set, against two servers sharing that PostgreSQL database.
#
#   [ROUTEKIT_PG_URL=URL] [SERVE_ARGS='…'] serve-people.sh ROUTEKIT [PEOPLE] [FOLLOWERS] [RATE] [SECONDS]
#
#   ROUTEKIT   a routekit built with the Server trait, release (and Postgres for ROUTEKIT_PG_URL):
#              `swift build -c release --traits Postgres,Server --product routekit --scratch-path .build-release-full`
#   PEOPLE     people made through the admin API, one read,write token each (default 1000)
#   FOLLOWERS  SSE followers, round-robin over the people (default 5000: 5 a person)
#   RATE       uploads a second, each to a random person (default 50);  SECONDS  how long (default 60)
#
#   ROUTEKIT_PG_URL  a PostgreSQL database (a new one: 2 × PEOPLE people and their tokens are made in it, and they
#                    stay), e.g. from scripts/pg-test-cluster.sh; the second run's followers and uploads alternate
#                    between two servers on it (serve-load.py people --second-server)
#   ROUTEKIT_PG_ONLY set: the PostgreSQL run alone
#   SERVE_ARGS       more options for both servers (per-person limits, when they exist, must let 5 streams and a few
#                    uploads a minute per person through)
#
# Each server gets --max-streams-per-token FOLLOWERS (a person's followers share its one token) and
# --max-connections-per-address above FOLLOWERS (every follower comes from 127.0.0.1); the open-file limit is raised
# to its hard limit. serve-load.py reads the servers' VmRSS and VmHWM (peak) from /proc. Prints serve-load.py's summary
# and its JSON line per run; exits 1 when a run was not exact (missing, extra, repeated, failed uploads, lost streams).
set -euo pipefail
RK=${1:?usage: serve-people.sh ROUTEKIT [PEOPLE] [FOLLOWERS] [RATE] [SECONDS]}
PEOPLE=${2:-1000}
FOLLOWERS=${3:-5000}
RATE=${4:-50}
SECONDS_=${5:-60}
HERE=$(cd "$(dirname "$0")" && pwd)
[[ -x $RK ]] || { echo "serve-people.sh: no executable $RK (see the usage at the top)" >&2; exit 2; }
DIR=$(mktemp -d /tmp/routekit-serve-people.XXXXXX)
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$DIR"' EXIT

# Open files: every follower is a socket on each side (this shell's children inherit the limit).
want=$((FOLLOWERS * 2 + 4096))
hard=$(ulimit -Hn)
if [[ $hard != unlimited ]] && ((hard < want)); then
    echo "serve-people.sh: the hard open-file limit is $hard, below the $want this run may need" >&2
    want=$hard
fi
ulimit -n "$want"

# start N STORE: starts server N on STORE, with any free port; sets PORT_N and appends its pid to PIDS.
start() {
    local n=$1 store=$2
    # shellcheck disable=SC2086  # SERVE_ARGS is split into options on purpose
    "$RK" serve --store "$store" --port 0 --log-level warning --max-streams-per-token "$FOLLOWERS" \
        --max-connections-per-address $((FOLLOWERS * 2 + 1024)) ${SERVE_ARGS:-} >"$DIR/serve$n.log" 2>&1 &
    PIDS+=($!)
    for _ in $(seq 100); do grep -qs 'listening on' "$DIR/serve$n.log" && break; sleep 0.1; done
    local port
    port=$(grep -o 'http://[0-9.]*:[0-9]*' "$DIR/serve$n.log" | head -1 | sed 's/.*://')
    if [[ -z $port ]]; then
        echo "serve-people.sh: server $n did not start:" >&2
        tail -20 "$DIR/serve$n.log" >&2
        exit 2
    fi
    printf -v "PORT_$n" '%s' "$port"
}

# stop: stops every server started so far.
stop() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
    PIDS=()
}

status=0
if [[ -z ${ROUTEKIT_PG_ONLY:-} ]]; then
    echo "== SQLite: $PEOPLE people, $FOLLOWERS followers, $RATE uploads/s for $SECONDS_ s ($(date -u +%FT%TZ))"
    S=$DIR/store.sqlite
    ADMIN=$("$RK" tokens create --store "$S" --scope admin --name load 2>"$DIR/tokens.log") ||
        { cat "$DIR/tokens.log" >&2; exit 2; }
    start 1 "$S"
    python3 "$HERE/serve-load.py" people "http://127.0.0.1:$PORT_1" "$ADMIN" --people "$PEOPLE" \
        --followers "$FOLLOWERS" --rate "$RATE" --seconds "$SECONDS_" --pid "${PIDS[0]}" || status=1
    stop
fi

if [[ -n ${ROUTEKIT_PG_URL:-} ]]; then
    echo "== PostgreSQL, two servers: $PEOPLE people, $FOLLOWERS followers, $RATE uploads/s for $SECONDS_ s"
    ADMIN=$("$RK" tokens create --store "$ROUTEKIT_PG_URL" --scope admin --name load 2>"$DIR/tokens.log") ||
        { cat "$DIR/tokens.log" >&2; exit 2; }
    start 1 "$ROUTEKIT_PG_URL"
    start 2 "$ROUTEKIT_PG_URL"
    python3 "$HERE/serve-load.py" people "http://127.0.0.1:$PORT_1" "$ADMIN" \
        --second-server "http://127.0.0.1:$PORT_2" --people "$PEOPLE" --followers "$FOLLOWERS" --rate "$RATE" \
        --seconds "$SECONDS_" --pid "${PIDS[0]}" --pid "${PIDS[1]}" || status=1
    stop
fi
exit $status
