#!/usr/bin/env bash
# Side-by-side *import* benchmark: `routekit import` into a new SQLite store vs `xmllint --stream --noout`
# merely scanning the same file (issue 3's yardstick), same run, interleaved.
#
#   import-peers.sh FILE [RUNS] [ROUTEKIT]
#
#   FILE      a GPX file (make_gpx.py 1000000 42 FILE)
#   RUNS      runs per variant, default 3; the median is reported
#   ROUTEKIT  the routekit executable, default .build/release/routekit (build with `make release`)
#
# Variants: xmllint --stream --noout; routekit import (durability process: WAL, synchronous=NORMAL);
# routekit import --durability power (synchronous=FULL); and a second import of the same file into the
# filled store (every track `unchanged`). Each is a whole process under /usr/bin/time (peak RSS); wall time
# from bash's microsecond clock. The store size is read after the first import (bytes per location).
set -euo pipefail
FILE=${1:?usage: import-peers.sh FILE [RUNS] [ROUTEKIT]}
RUNS=${2:-3}
RK=${3:-.build/release/routekit}
[[ -x $RK ]] || { echo "no executable $RK (run: make release)" >&2; exit 2; }
command -v xmllint >/dev/null || { echo "xmllint is missing (apt-get install libxml2-utils)" >&2; exit 2; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cat "$FILE" >/dev/null  # warm the page cache

run() {  # name, command...: appends "seconds rss_kib" to $TMP/name
    local name=$1; shift
    local t0=$EPOCHREALTIME
    /usr/bin/time -f '%M' -o "$TMP/rss" "$@" >"$TMP/out" 2>"$TMP/err" || { cat "$TMP/err" >&2; exit 1; }
    local t1=$EPOCHREALTIME
    echo "$(echo "$t1 - $t0" | bc -l) $(cat "$TMP/rss")" >>"$TMP/$name"
}

POINTS=$(grep -c '<trkpt' "$FILE" || true)
for ((i = 1; i <= RUNS; i++)); do
    run xmllint xmllint --stream --noout "$FILE"
    rm -rf "$TMP/store"
    run import "$RK" import --no-progress --store "$TMP/store/s.sqlite" "$FILE"
    grep -q "1 imported\|imported" "$TMP/out" || { cat "$TMP/out" >&2; exit 1; }
    STORE_BYTES=$(stat -c %s "$TMP/store/s.sqlite")
    run reimport "$RK" import --no-progress --store "$TMP/store/s.sqlite" "$FILE"
    grep -q "unchanged" "$TMP/out" || { echo "second import was not unchanged" >&2; cat "$TMP/out" >&2; exit 1; }
    rm -rf "$TMP/store"
    run power "$RK" import --no-progress --durability power --store "$TMP/store/s.sqlite" "$FILE"
    echo "run $i done" >&2
done

median() { sort -n -k1,1 "$TMP/$1" | awk -v n="$RUNS" 'NR == int((n + 1) / 2) { print $1 }'; }
peak() { sort -n -k2,2 "$TMP/$1" | tail -1 | awk '{ printf "%.1f", $2 / 1024 }'; }
XM=$(median xmllint)
printf '%s: %s track points, %s runs (median)\n\n' "$FILE" "$POINTS" "$RUNS"
printf '| variant | wall s | M locations/s | peak RSS MB | time / xmllint |\n|---|---|---|---|---|\n'
for v in xmllint import power reimport; do
    M=$(median $v)
    printf '| %s | %.3f | %.2f | %s | %.2f |\n' "$v" "$M" "$(echo "$POINTS / $M / 1000000" | bc -l)" "$(peak $v)" \
        "$(echo "$M / $XM" | bc -l)"
done
printf '\nstore: %s bytes, %.1f bytes per location\n' "$STORE_BYTES" "$(echo "$STORE_BYTES / $POINTS" | bc -l)"
