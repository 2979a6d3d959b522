#!/usr/bin/env bash
# `routekit render` against the targets of the pictures issue: a 1,000,000-point route to SVG and to PNG (each
# under 1 s), and the heatmap of 1,000 routes of 10,000 points (under 10 s, under 200 MB).
#
#   render.sh [RUNS] [ROUTEKIT]
#
#   RUNS      runs per measurement, default 3; the median wall time and the largest peak RSS are reported
#   ROUTEKIT  a release routekit, default .build/release/routekit (swift build -c release --product routekit)
#
# Data: ../shared/peers/make_gpx.py makes the 1,000,000-point track (seed 42) and 1,000 tracks of 10,000 points
# (seeds 1…1000); they are imported into two new SQLite stores in a temporary folder (kept in $RENDER_DATA when it
# is set, so a second run does not make them again). Timed: the whole `routekit render` process, which reads the
# route(s) through the route query.
set -euo pipefail
RUNS=${1:-3}
RK=${2:-.build/release/routekit}
[[ -x $RK ]] || { echo "no executable $RK (see the comment at the top)" >&2; exit 2; }
MAKE=$(dirname "$0")/../../../shared/peers/make_gpx.py
[[ -f $MAKE ]] || { echo "no $MAKE: ../shared/peers is needed" >&2; exit 2; }
DATA=${RENDER_DATA:-$(mktemp -d)}
mkdir -p "$DATA/heat"
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

if [[ ! -f $DATA/one.sqlite ]]; then
    python3 "$MAKE" 1000000 42 "$DATA/one.gpx" 2>/dev/null
    "$RK" import --no-progress --store "$DATA/one.sqlite" "$DATA/one.gpx" >/dev/null
fi
if [[ ! -f $DATA/heat.sqlite ]]; then
    seq 1 1000 | xargs -P 2 -I{} python3 "$MAKE" 10000 {} "$DATA/heat/r{}.gpx" >/dev/null 2>&1
    "$RK" import --no-progress --jobs 2 --store "$DATA/heat.sqlite" "$DATA/heat" >/dev/null
fi
ROUTE=$("$RK" routes --json --store "$DATA/one.sqlite" | head -1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["uuid"])')

measure() {  # label, then the routekit arguments
    local label=$1; shift
    : >"$DATA/times"; : >"$DATA/rss"
    for ((i = 1; i <= RUNS; i++)); do
        /usr/bin/time -f '%e %M' -o "$DATA/one-run" "$RK" "$@" 2>/dev/null
        read -r t m <"$DATA/one-run"
        echo "$t" >>"$DATA/times"; echo "$m" >>"$DATA/rss"
    done
    printf '%-34s %6.2f s   %4d MB peak RSS\n' "$label" "$(median <"$DATA/times")" \
        "$(( $(sort -n "$DATA/rss" | tail -1) / 1024 ))"
}
measure "1,000,000-point route to SVG" render "$ROUTE" --store "$DATA/one.sqlite" -o "$DATA/one.svg"
measure "1,000,000-point route to PNG" render "$ROUTE" --store "$DATA/one.sqlite" -o "$DATA/one.png"
measure "heatmap, 1,000 x 10,000 points" render --heatmap --store "$DATA/heat.sqlite" -o "$DATA/heat.png"
echo "SVG $(stat -c %s "$DATA/one.svg") bytes; PNG $(stat -c %s "$DATA/one.png") bytes; data in $DATA"
