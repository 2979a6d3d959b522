#!/usr/bin/env bash
# Upload through `routekit serve` vs `routekit import` of the same file, same run, interleaved.
#
#   serve-upload.sh FILE [RUNS] [ROUTEKIT]
#
#   FILE      a GPX file (python3 ../shared/peers/make_gpx.py 1000000 42 FILE)
#   RUNS      runs per variant, default 3; the median is reported
#   ROUTEKIT  a routekit built with the Server trait, default .build-release-server/release/routekit
#             (swift build -c release --traits Server --product routekit --scratch-path .build-release-server)
#
# Each run starts from a new SQLite store. `import` is the whole process (wall time, peak RSS). `upload` is one
# `curl -X POST -T FILE` to a server started on a new store (wall time of the request); the server's RSS is
# read from /proc before the upload (VmRSS) and after it (VmHWM, the peak), and their difference reported.
set -euo pipefail
FILE=${1:?usage: serve-upload.sh FILE [RUNS] [ROUTEKIT]}
RUNS=${2:-3}
RK=${3:-.build-release-server/release/routekit}
[[ -x $RK ]] || { echo "no executable $RK (see the comment at the top)" >&2; exit 2; }
TMP=$(mktemp -d)
PID=""
trap '[[ -n $PID ]] && kill $PID 2>/dev/null; rm -rf "$TMP"' EXIT
cat "$FILE" >/dev/null  # warm the page cache
POINTS=$(grep -c '<trkpt' "$FILE" || true)
PORT=$((20000 + RANDOM % 20000))
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

for ((i = 1; i <= RUNS; i++)); do
    rm -rf "$TMP/import" && mkdir -p "$TMP/import"
    t0=$EPOCHREALTIME
    /usr/bin/time -f '%M' -o "$TMP/rss" "$RK" import --no-progress --store "$TMP/import/s.sqlite" "$FILE" >/dev/null
    t1=$EPOCHREALTIME
    echo "$(echo "$t1 - $t0" | bc -l)" >>"$TMP/import.s"
    cat "$TMP/rss" >>"$TMP/import.rss"

    rm -rf "$TMP/serve" && mkdir -p "$TMP/serve"
    TOKEN=$("$RK" tokens create --store "$TMP/serve/s.sqlite" --source bench --scope read,write 2>/dev/null)
    "$RK" serve --store "$TMP/serve/s.sqlite" --port $PORT --log-level warning --max-upload-mb 4096 \
        2>"$TMP/serve.log" &
    PID=$!
    for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.05; done
    before=$(awk '/VmRSS/ {print $2}' /proc/$PID/status)
    t0=$EPOCHREALTIME
    # -T streams the file (--data-binary @FILE reads it all into curl's memory first, and is slower than the server).
    code=$(curl -s -o "$TMP/answer" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" -H 'Expect:' \
        -X POST -T "$FILE" "http://127.0.0.1:$PORT/v1/uploads?name=big.gpx")
    t1=$EPOCHREALTIME
    [[ $code == 201 ]] || { echo "upload answered $code: $(cat "$TMP/answer")" >&2; exit 1; }
    peak=$(awk '/VmHWM/ {print $2}' /proc/$PID/status)
    echo "$(echo "$t1 - $t0" | bc -l)" >>"$TMP/upload.s"
    echo $((peak - before)) >>"$TMP/upload.rss"
    echo "$before" >>"$TMP/upload.base"
    kill $PID; wait $PID 2>/dev/null || true; PID=""
done

imp=$(median <"$TMP/import.s"); up=$(median <"$TMP/upload.s")
echo "file: $FILE ($POINTS points), $RUNS runs, medians"
printf 'routekit import   %7.3f s  %6.2f M points/s  peak RSS %d MiB\n' "$imp" \
    "$(echo "$POINTS / $imp / 1000000" | bc -l)" $(($(median <"$TMP/import.rss") / 1024))
printf 'upload via serve  %7.3f s  %6.2f M points/s  server RSS +%d MiB (from %d MiB)\n' "$up" \
    "$(echo "$POINTS / $up / 1000000" | bc -l)" $(($(median <"$TMP/upload.rss") / 1024)) \
    $(($(median <"$TMP/upload.base") / 1024))
printf 'upload / import points per second: %.2fx\n' "$(echo "$imp / $up" | bc -l)"
