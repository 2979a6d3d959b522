#!/usr/bin/env bash
# PostgreSQL import benchmarks (issue 7), SQLite beside each, interleaved in the same run:
#
#   pg-import.sh single FILE URL [RUNS] [ROUTEKIT]
#       `routekit import FILE` into a new SQLite store and into an empty PostgreSQL database (created and
#       dropped per run on the server URL names), RUNS times each, medians reported with locations/s.
#   pg-import.sh concurrent URL|sqlite [FILES] [POINTS] [ROUTEKIT]
#       4 `routekit import` processes at once, FILES files of POINTS points each (make_gpx.py, seeds 1…), into one
#       empty PostgreSQL database, while `routekit changes --follow --json` tails it from the start. Then checks
#       the follower: every imported route added exactly once (no repeat), none missing (no gap), nothing deleted,
#       and the same set as `routekit routes`. Reports routes/s and locations/s (wall time of the 4 importers).
#       `sqlite` instead of a URL runs the same into a new SQLite file, for comparison.
#       INPUT=DIR reuses DIR/in1 … DIR/in4 made by an earlier run (or by hand) instead of generating them.
#
#   ROUTEKIT  a routekit built with the PostgreSQL store, default .build-postgres/release/routekit
#             (swift build -c release --traits Postgres --scratch-path .build-postgres --product routekit)
#   URL       postgres://user@host:port/db on a server where that user may CREATE DATABASE
# Needs psql and python3 (the generator in ../shared/peers).
set -euo pipefail
MODE=${1:?usage: pg-import.sh single|concurrent ...}
shift
HERE=$(cd "$(dirname "$0")" && pwd)
GEN=$HERE/../../../shared/peers/make_gpx.py
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

newdb() {  # URL -> URL of a new empty database
    local name="rk_bench_$RANDOM$RANDOM"
    psql -X -q -d "$1" -c "CREATE DATABASE $name" >/dev/null
    python3 -c 'import sys,urllib.parse as u; p=u.urlsplit(sys.argv[1]); print(u.urlunsplit(p._replace(path="/"+sys.argv[2])))' "$1" "$name"
}
dropdb() {  # server URL, database URL
    local name=${2##*/}; name=${name%%\?*}
    psql -X -q -d "$1" -c "DROP DATABASE IF EXISTS $name WITH (FORCE)" >/dev/null
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

if [[ $MODE == single ]]; then
    FILE=${1:?FILE}; URL=${2:?URL}; RUNS=${3:-3}; RK=${4:-.build-postgres/release/routekit}
    points=$(grep -c "<trkpt" "$FILE")
    cat "$FILE" >/dev/null
    for i in $(seq "$RUNS"); do
        t0=$EPOCHREALTIME
        /usr/bin/time -f '%M' -o "$TMP/rss" "$RK" import "$FILE" --no-progress --store "$TMP/s$i.sqlite" >/dev/null
        t1=$EPOCHREALTIME
        echo "$(echo "$t1 - $t0" | bc -l)" >>"$TMP/sqlite"; cat "$TMP/rss" >>"$TMP/sqlite.rss"
        db=$(newdb "$URL")
        t0=$EPOCHREALTIME
        /usr/bin/time -f '%M' -o "$TMP/rss" "$RK" import "$FILE" --no-progress --store "$db" >/dev/null
        t1=$EPOCHREALTIME
        echo "$(echo "$t1 - $t0" | bc -l)" >>"$TMP/pg"; cat "$TMP/rss" >>"$TMP/pg.rss"
        dropdb "$URL" "$db"
        rm -f "$TMP/s$i.sqlite"*
    done
    s=$(median <"$TMP/sqlite"); p=$(median <"$TMP/pg")
    printf 'import %s (%d locations), %d runs each, medians:\n' "$(basename "$FILE")" "$points" "$RUNS"
    printf '  SQLite     %.3f s  %.2f M locations/s  peak RSS %d MB   (runs: %s)\n' "$s" \
        "$(echo "$points / $s / 1000000" | bc -l)" "$(( $(median <"$TMP/sqlite.rss") / 1024 ))" "$(tr '\n' ' ' <"$TMP/sqlite")"
    printf '  PostgreSQL %.3f s  %.2f M locations/s  peak RSS %d MB   (runs: %s)\n' "$p" \
        "$(echo "$points / $p / 1000000" | bc -l)" "$(( $(median <"$TMP/pg.rss") / 1024 ))" "$(tr '\n' ' ' <"$TMP/pg")"
    printf '  PostgreSQL rate / SQLite rate: %.2f\n' "$(echo "$s / $p" | bc -l)"
elif [[ $MODE == concurrent ]]; then
    URL=${1:?URL}; FILES=${2:-25}; POINTS=${3:-20000}; RK=${4:-.build-postgres/release/routekit}
    IN=${INPUT:-$TMP}
    for w in 1 2 3 4; do
        mkdir -p "$IN/in$w"
        for f in $(seq "$FILES"); do
            [[ -f $IN/in$w/r$f.gpx ]] || python3 "$GEN" "$POINTS" "$((w * 1000 + f))" "$IN/in$w/r$f.gpx" 2>/dev/null
        done
    done
    if [[ $URL == sqlite ]]; then db=$TMP/concurrent.sqlite; else db=$(newdb "$URL"); fi
    "$RK" routes --store "$db" >/dev/null   # creates the schema, so the follower starts on it
    "$RK" changes --follow --json --store "$db" >"$TMP/follow.jsonl" 2>"$TMP/follow.err" &
    follower=$!
    sleep 1
    t0=$EPOCHREALTIME
    for w in 1 2 3 4; do "$RK" import "$IN/in$w" --no-progress --json --store "$db" >"$TMP/import$w.jsonl" 2>"$TMP/import$w.err" & done
    wait $(jobs -p | grep -v "^$follower$")
    t1=$EPOCHREALTIME
    "$RK" routes --json --store "$db" >"$TMP/routes.jsonl"
    sleep 2   # the follower's last change set
    kill -INT $follower; wait $follower || true
    python3 - "$TMP" "$(echo "$t1 - $t0" | bc -l)" "$FILES" "$POINTS" "$URL" <<'PY'
import json, sys, collections
tmp, seconds, files, points = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
added, deleted, sets = collections.Counter(), 0, 0
for line in open(f"{tmp}/follow.jsonl"):
    s = json.loads(line); sets += 1
    for r in s["added"]: added[r["uuid"]] += 1
    deleted += len(s["deleted"])
routes = {json.loads(l)["uuid"] for l in open(f"{tmp}/routes.jsonl") if l.strip()}
repeats = sum(c - 1 for c in added.values() if c > 1)
missing = routes - set(added)
extra = set(added) - routes
total = 4 * files
print(f"{'SQLite' if sys.argv[5] == 'sqlite' else 'PostgreSQL'}: 4 importers x {files} files x {points} points, follower from the start: {len(routes)}/{total} routes stored, "
      f"{sets} change sets, {len(added)} added, {repeats} repeated, {len(missing)} missing, {len(extra)} unknown, {deleted} deleted")
print(f"  wall {seconds:.2f} s: {len(routes)/seconds:.1f} routes/s, {len(routes)*points/seconds/1e6:.2f} M locations/s (all importers together)")
sys.exit(0 if (len(routes) == total and repeats == 0 and not missing and not extra and deleted == 0) else 1)
PY
    [[ $URL == sqlite ]] || dropdb "$URL" "$db"
else
    echo "usage: pg-import.sh single FILE URL [RUNS] [ROUTEKIT] | concurrent URL [FILES] [POINTS] [ROUTEKIT]" >&2
    exit 2
fi
