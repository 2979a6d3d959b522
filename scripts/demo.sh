#!/usr/bin/env bash
# The main job on the embedded default store: import every route in sample-routes/ into the SQLite store
# (default ~/.local/share/routekit/store.sqlite, or $ROUTEKIT_STORE), list what it holds, export one route
# back to schema-valid GPX 1.1, smooth every route into a new version, show the change feed, and show that
# importing again stores nothing new.
set -euo pipefail
cd "$(dirname "$0")/.."
out=.build-demo
mkdir -p "$out"
swift build --product routekit
bin="$(swift build --show-bin-path)/routekit"

echo
echo "== routekit import sample-routes/"
"$bin" import sample-routes/

echo
echo "== routekit workouts"
"$bin" workouts

echo
echo "== routekit routes"
"$bin" routes

route=$("$bin" routes --json --limit 1 | sed -E 's/.*"uuid":"([^"]+)".*/\1/')
echo
echo "== routekit export $route -o $out/exported.gpx (and .geojson, .csv)"
"$bin" export "$route" -o "$out/exported.gpx"
"$bin" export "$route" -o "$out/exported.geojson"
"$bin" export "$route" -o "$out/exported.csv"
if command -v xmllint >/dev/null 2>&1 && [ -f ../shared/schemas/gpx-1.1.xsd ]; then
    xmllint --noout --schema ../shared/schemas/gpx-1.1.xsd "$out/exported.gpx"
fi

echo
echo "== routekit changes --limit 2 (the change feed: every current route, then the anchor to resume from)"
"$bin" changes --limit 2
anchor=$("$bin" changes --json | tail -1 | sed -E 's/.*"anchor":"([^"]+)".*/\1/')

echo
echo "== routekit smooth --all --jobs 2 (outliers, Kalman/RTS smoothing, 5 m simplification: new versions)"
"$bin" smooth --all --jobs 2

echo
echo "== routekit changes --anchor … (what changed since: each old version deleted, its new one added)"
"$bin" changes --anchor "$anchor"

echo
echo "== routekit render WORKOUT -o $out/ride.svg and .png (the smoothed route over the raw one, with its profiles)"
workout=$("$bin" workouts --json | head -1 | sed -E 's/.*"uuid":"([^"]+)".*/\1/')
"$bin" render "$workout" -o "$out/ride.svg"
"$bin" render "$workout" -o "$out/ride.png"

echo
echo "== routekit import sample-routes/ again: every track is already stored"
"$bin" import sample-routes/
