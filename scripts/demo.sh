#!/usr/bin/env bash
# The main job on the embedded default, for now (the store comes next): read every route in
# sample-routes/, report what each holds, and convert each to schema-valid GPX 1.1, GeoJSON and CSV.
set -euo pipefail
cd "$(dirname "$0")/.."
out=.build-demo
mkdir -p "$out"
swift build --product routekit
bin="$(swift build --show-bin-path)/routekit"

echo
echo "== routekit inspect sample-routes/*.gpx"
"$bin" inspect sample-routes/*.gpx

echo
echo "== routekit convert (GPX 1.1, GeoJSON, CSV) into $out/"
for f in sample-routes/*.gpx; do
    name=$(basename "$f" .gpx)
    "$bin" convert "$f" -o "$out/$name.gpx"
    "$bin" convert "$f" -o "$out/$name.geojson"
    "$bin" convert "$f" -o "$out/$name.csv"
done
if command -v xmllint >/dev/null 2>&1 && [ -f ../shared/schemas/gpx-1.1.xsd ]; then
    echo
    echo "== xmllint --schema gpx-1.1.xsd (what RouteKit writes must validate)"
    xmllint --noout --schema ../shared/schemas/gpx-1.1.xsd "$out"/*.gpx
fi
echo
echo "Done: $(ls "$out" | wc -l) files in $out/."
