#!/usr/bin/env bash
# Many files against one: `routekit import` of one big GPX, a folder of GPX files and a Strava-style export zip,
# each into a new store, RUNS times, under /usr/bin/time (wall seconds, peak RSS KiB).
#
#   many-files.sh BIG.gpx FOLDER EXPORT.zip [RUNS] [ROUTEKIT]
#
# Make the data with ../../../shared/peers/make_gpx.py (BIG: `make_gpx.py 1000000 42 BIG.gpx`; FOLDER: 300 files
# of `make_gpx.py 3600 SEED`) and make-strava-export.py (`make-strava-export.py 1000 EXPORT.zip --manual 20`).
# The export is imported twice per run: the second import finds everything unchanged.
set -euo pipefail
BIG=${1:?usage: many-files.sh BIG.gpx FOLDER EXPORT.zip [RUNS] [ROUTEKIT]}
FOLDER=${2:?}; EXPORT=${3:?}; RUNS=${4:-3}; RK=${5:-.build/release/routekit}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for run in $(seq "$RUNS"); do
    echo "== run $run"
    /usr/bin/time -f "big file: %e s %M KB" "$RK" import --store "$tmp/a$run.sqlite" --no-progress "$BIG" >/dev/null
    /usr/bin/time -f "folder: %e s %M KB" "$RK" import --store "$tmp/b$run.sqlite" --no-progress "$FOLDER" >/dev/null
    /usr/bin/time -f "export: %e s %M KB" "$RK" import --store "$tmp/c$run.sqlite" --no-progress "$EXPORT" >/dev/null
    /usr/bin/time -f "export again: %e s %M KB" "$RK" import --store "$tmp/c$run.sqlite" --no-progress "$EXPORT" \
        >/dev/null
done
