#!/usr/bin/env bash
# Symbol graphs of the library modules, from the modules already built in a scratch folder (.build-full, the
# --traits Postgres,Server,Client build of `make test`): no second build. Used by scripts/public-api.sh (the API listing)
# and scripts/docs.sh (docc).
#
#   scripts/symbol-graphs.sh OUTDIR [extra symbolgraph-extract flags…]
#
# Writes OUTDIR/MODULE/MODULE.symbols.json (and MODULE@OTHER.symbols.json for extensions of other modules' types).
# $ROUTEKIT_SYMBOLS_BUILD names another scratch folder.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$1
shift
build=${ROUTEKIT_SYMBOLS_BUILD:-.build-full}
modules_dir=$build/debug/Modules
if [ ! -d "$modules_dir" ]; then
    echo "error: $modules_dir is missing: build first with scripts/build-full.sh" >&2
    exit 2
fi
# RouteKitClient is empty unless the build had `--traits Client` (scripts/docs.sh then skips its catalog, saying so).
modules="RouteKit RouteKitIngest RouteKitGPX RouteKitGEOS RouteKitFIT RouteKitImport RouteKitTCX RouteKitHealth
RouteKitSQLite RouteKitProcessing RouteKitPostgres RouteKitServer RouteKitRender RouteKitClient"
args=()
while IFS= read -r map; do args+=(-Xcc "-fmodule-map-file=$PWD/$map"); done < <(
    find "$build/debug/" -maxdepth 2 -name module.modulemap -not -path "*-tool.build/*"; find Sources "$build/checkouts" -name module.modulemap)
while IFS= read -r inc; do args+=(-Xcc "-I$PWD/$inc"); done < <(find "$build/checkouts" Sources -type d -name include)
for flag in $(pkg-config --cflags-only-I cairo geos 2>/dev/null); do args+=(-Xcc "$flag"); done
for module in $modules; do
    mkdir -p "$out/$module"
    swift symbolgraph-extract -module-name "$module" -I "$modules_dir" -target "$(uname -m)-unknown-linux-gnu" \
        -minimum-access-level public -output-dir "$out/$module" "${args[@]}" "$@"
done
