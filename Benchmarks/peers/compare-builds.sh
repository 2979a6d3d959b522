#!/usr/bin/env bash
# Two routekit builds on the same workloads, runs interleaved: median wall time and peak RSS of each, and the ratio
# new ÷ old (below 1: the new build is faster or smaller).
#
#   compare-builds.sh OLD NEW [RUNS] [DATA]
#
#   OLD, NEW  two routekit executables (release builds with the Server trait, for the upload row)
#   RUNS      runs per workload and build, default 3
#   DATA      a folder with track_1m.gpx (make_gpx.py 1000000 42), folder/ (300 files of make_gpx.py 3600 SEED),
#             strava.zip (make-strava-export.py 1000 strava.zip --manual 20) and export.zip (an Apple Health export:
#             serve-stalls.sh makes one in /tmp/routekit-stalls); default /tmp/bench
#
# Workloads: parse (inspect of the 1M GPX file), import of it into a new SQLite store, import of the folder, of the
# Strava export, of the format corpus's big FIT file, of the Health export.zip, and the upload of the 1M GPX file to
# `serve` (curl -T; wall time of the request, the server's RSS growth).
set -euo pipefail
OLD=${1:?usage: compare-builds.sh OLD NEW [RUNS] [DATA]}
NEW=${2:?}
RUNS=${3:-3}
DATA=${4:-/tmp/bench}
HERE=$(cd "$(dirname "$0")" && pwd)
FIT=$HERE/../../../shared/format-corpus/muktihari__fit__testdata__big_activity.fit
TMP=$(mktemp -d)
PID=""
trap '[[ -n $PID ]] && kill $PID 2>/dev/null; rm -rf "$TMP"' EXIT
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# run NAME BUILD-LABEL COMMAND…: wall seconds and peak RSS (KiB) appended to $TMP/NAME.LABEL.{s,kb}
run() {
    local name=$1 label=$2
    shift 2
    /usr/bin/time -f '%e %M' -o "$TMP/t" "$@" >/dev/null 2>"$TMP/err" || { echo "$name ($label) failed:" >&2; tail -3 "$TMP/err" >&2; exit 1; }
    read -r s kb <"$TMP/t"
    echo "$s" >>"$TMP/$name.$label.s"
    echo "$kb" >>"$TMP/$name.$label.kb"
}

upload() {
    local label=$1 rk=$2
    rm -rf "$TMP/serve" && mkdir -p "$TMP/serve"
    local token port=$((20000 + RANDOM % 20000))
    token=$("$rk" tokens create --store "$TMP/serve/s.sqlite" --source bench --scope read,write 2>/dev/null)
    "$rk" serve --store "$TMP/serve/s.sqlite" --port $port --log-level warning --max-upload-mb 4096 2>/dev/null &
    PID=$!
    for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.05; done
    local before t0 t1 code
    before=$(awk '/VmRSS/ {print $2}' /proc/$PID/status)
    t0=$EPOCHREALTIME
    code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $token" -H 'Expect:' -X POST \
        -T "$DATA/track_1m.gpx" "http://127.0.0.1:$port/v1/uploads?name=big.gpx")
    t1=$EPOCHREALTIME
    [[ $code == 201 ]] || { echo "upload ($label) answered $code" >&2; exit 1; }
    echo "$t1 - $t0" | bc -l >>"$TMP/upload.$label.s"
    echo $(($(awk '/VmHWM/ {print $2}' /proc/$PID/status) - before)) >>"$TMP/upload.$label.kb"
    kill $PID; wait $PID 2>/dev/null || true; PID=""
}

cat "$DATA/track_1m.gpx" "$DATA"/folder/* "$DATA/strava.zip" "$DATA/export.zip" "$FIT" >/dev/null  # page cache
for ((i = 1; i <= RUNS; i++)); do
    for label in old new; do
        rk=$OLD; [[ $label == new ]] && rk=$NEW
        rm -f "$TMP"/*.sqlite*
        run parse $label "$rk" inspect "$DATA/track_1m.gpx"
        run import $label "$rk" import --no-progress --store "$TMP/a.sqlite" "$DATA/track_1m.gpx"
        run folder $label "$rk" import --no-progress --store "$TMP/b.sqlite" "$DATA/folder"
        run strava $label "$rk" import --no-progress --store "$TMP/c.sqlite" "$DATA/strava.zip"
        run fit $label "$rk" import --no-progress --store "$TMP/d.sqlite" "$FIT"
        run health $label "$rk" import --no-progress --store "$TMP/e.sqlite" "$DATA/export.zip"
        upload $label "$rk"
    done
done
printf '%-8s %10s %10s %7s %12s %12s %7s\n' workload "old s" "new s" "new/old" "old MiB" "new MiB" "new/old"
for name in parse import folder strava fit health upload; do
    os=$(median <"$TMP/$name.old.s"); ns=$(median <"$TMP/$name.new.s")
    ok=$(median <"$TMP/$name.old.kb"); nk=$(median <"$TMP/$name.new.kb")
    printf '%-8s %10.3f %10.3f %7.2f %12.1f %12.1f %7.2f\n' "$name" "$os" "$ns" "$(echo "$ns / $os" | bc -l)" \
        "$(echo "$ok / 1024" | bc -l)" "$(echo "$nk / 1024" | bc -l)" "$(echo "($nk + 1) / ($ok + 1)" | bc -l)"
done
echo "(upload: MiB is the server's RSS growth during the request; $RUNS runs each, interleaved, medians)"
