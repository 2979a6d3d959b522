#!/usr/bin/env bash
# Apple Health export import against xmllint --stream (and healthkit-to-sqlite with HK2S=1) on the same export,
# whole processes, interleaved, median wall time and peak RSS.
#
#   Benchmarks/peers/health-peers.sh EXPORT_FOLDER RUNS [ROUTEKIT]
#
# EXPORT_FOLDER is an apple_health_export/ folder (make one with make-health-export.py; never commit it).
# ROUTEKIT defaults to .build/release/routekit. Each RouteKit run imports into a new store, then once more into
# the same store (everything unchanged). healthkit-to-sqlite reads export.xml only (--xml): it stores every record
# and never reads the route files.
set -euo pipefail
export_dir=${1:?usage: health-peers.sh EXPORT_FOLDER RUNS [ROUTEKIT]}
runs=${2:-3}
routekit=${3:-.build/release/routekit}
xml="$export_dir/export.xml"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command -v xmllint >/dev/null || { echo "install xmllint: apt-get install libxml2-utils" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "install GNU time: apt-get install time" >&2; exit 1; }
cat "$xml" > /dev/null  # warm the page cache
measure() {  # name, command...: appends "wall rss_kb" to $tmp/name
    local name=$1; shift
    /usr/bin/time -f '%e %M' -o "$tmp/t" "$@" > /dev/null 2>&1 || { echo "$name failed" >&2; cat "$tmp/t" >&2; }
    tail -1 "$tmp/t" >> "$tmp/$name"
}
for ((i = 0; i < runs; i++)); do
    measure xmllint xmllint --stream --noout "$xml"
    rm -f "$tmp"/store.sqlite*
    measure routekit "$routekit" import --no-progress --store "$tmp/store.sqlite" "$export_dir"
    measure routekit-again "$routekit" import --no-progress --store "$tmp/store.sqlite" "$export_dir"
    if [ "${HK2S:-0}" = 1 ]; then
        rm -f "$tmp/hk.db"
        measure healthkit-to-sqlite healthkit-to-sqlite --xml -s "$xml" "$tmp/hk.db"
    fi
done
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
printf '| tool | median wall s | peak RSS MB | runs (s) |\n|---|---|---|---|\n'
for name in xmllint routekit routekit-again healthkit-to-sqlite; do
    [ -f "$tmp/$name" ] || continue
    wall=$(cut -d' ' -f1 "$tmp/$name" | median)
    rss=$(cut -d' ' -f2 "$tmp/$name" | sort -n | tail -1)
    printf '| %s | %s | %.1f | %s |\n' "$name" "$wall" "$(echo "$rss / 1024" | bc -l)" "$(cut -d' ' -f1 "$tmp/$name" | paste -sd, -)"
done
echo "$(du -b "$xml" | cut -f1) bytes of export.xml; $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
