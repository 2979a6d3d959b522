#!/usr/bin/env bash
# Whether heavy uploads stall `routekit serve`: GET /healthz and a one-change SSE delivery, measured while
# HEAVY clients upload an Apple Health export.zip and HEAVY others a FIT file (serve-load.py stalls).
#
#   serve-stalls.sh [ROUTEKIT] [HEAVY] [ROUNDS]
#
#   ROUTEKIT  a routekit built with the Server trait, default .build-release/release/routekit
#             (swift build -c release --traits Server --product routekit --scratch-path .build-release)
#   HEAVY     clients per kind, default 4;  ROUNDS  uploads per client, default 3
#
# The export is made once in /tmp/routekit-stalls (make-health-export.py: 40 workouts of 1,800 points, 20,000 heart
# rate records, 60 MB of export.xml, about 4 MB zipped); the FIT file is the format corpus's big_activity.fit.
set -euo pipefail
RK=${1:-.build-release/release/routekit}
HEAVY=${2:-4}
ROUNDS=${3:-3}
HERE=$(cd "$(dirname "$0")" && pwd)
FIT=$HERE/../../../shared/format-corpus/muktihari__fit__testdata__big_activity.fit
[[ -x $RK ]] || { echo "no executable $RK (see the comment at the top)" >&2; exit 2; }
[[ -f $FIT ]] || { echo "no $FIT (../shared/format-corpus)" >&2; exit 2; }
DATA=/tmp/routekit-stalls
if [[ ! -f $DATA/export.zip ]]; then
    rm -rf "$DATA" && mkdir -p "$DATA"
    python3 "$HERE/make-health-export.py" "$DATA/h" --workouts 40 --points 1800 --heart-rate 20000 --size 60M >/dev/null
    (cd "$DATA/h" && zip -qr ../export.zip apple_health_export)
fi
TMP=$(mktemp -d)
PID=""
trap '[[ -n $PID ]] && kill $PID 2>/dev/null; rm -rf "$TMP"' EXIT
PORT=$((20000 + RANDOM % 20000))
TOKEN=$("$RK" tokens create --store "$TMP/s.sqlite" --source bench --scope read,write 2>/dev/null)
for ((k = 0; k < 2 * HEAVY * ROUNDS; k++)); do
    "$RK" tokens create --store "$TMP/s.sqlite" --source "heavy-$k" --scope write 2>/dev/null >>"$TMP/tokens"
done
"$RK" serve --store "$TMP/s.sqlite" --port $PORT --log-level warning --max-concurrent-imports $((2 * HEAVY + 4)) \
    2>"$TMP/serve.log" &
PID=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.05; done
python3 "$HERE/serve-load.py" stalls "http://127.0.0.1:$PORT" "$TOKEN" --health "$DATA/export.zip" --fit "$FIT" \
    --heavy-tokens "$TMP/tokens" --heavy "$HEAVY" --rounds "$ROUNDS"
echo "server peak RSS $(($(awk '/VmHWM/ {print $2}' /proc/$PID/status) / 1024)) MiB"
