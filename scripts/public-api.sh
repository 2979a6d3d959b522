#!/usr/bin/env bash
# The public API of every library module, as a committed listing (api/MODULE.txt): one line per public declaration
# and conformance, from the symbol graph of the modules already built in .build-full (--traits Postgres,Server,Client).
# SPI (`@_spi(RouteKitBackend)`) and `package` declarations are not listed: they are not public API.
#
#   scripts/public-api.sh check    # fails when the listing and the code differ (CI)
#   scripts/public-api.sh update   # rewrites the listing; commit it with the change that altered the API
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-check}
modules="RouteKit RouteKitIngest RouteKitGPX RouteKitGEOS RouteKitFIT RouteKitImport RouteKitTCX RouteKitHealth
RouteKitSQLite RouteKitProcessing RouteKitPostgres RouteKitServer RouteKitRender RouteKitClient"
graphs=$(mktemp -d)
trap 'rm -rf "$graphs"' EXIT
ROUTEKIT_SYMBOLS_BUILD=${ROUTEKIT_API_BUILD:-.build-full} scripts/symbol-graphs.sh "$graphs/modules" \
    -skip-synthesized-members
find "$graphs/modules" -name '*.symbols.json' -exec mv {} "$graphs/" \;
listing=$graphs/listing
mkdir -p "$listing"
python3 - "$graphs" "$listing" $modules <<'PY'
import json, os, sys
graphs, out, modules = sys.argv[1], sys.argv[2], sys.argv[3:]
# Conformances every type gets from the compiler, whatever the code says.
IMPLICIT = {"s:s8CopyableP", "s:s9EscapableP", "s:s16SendableMetatypeP"}
for module in modules:
    lines = set()
    for name in os.listdir(graphs):
        # MODULE.symbols.json and MODULE@OTHER.symbols.json (extensions of other modules' types)
        if not name.endswith(".symbols.json") or name.split("@")[0].split(".")[0] != module:
            continue
        graph = json.load(open(os.path.join(graphs, name)))
        byid = {}
        for s in graph["symbols"]:
            if s.get("spi"):
                continue
            decl = "".join(f["spelling"] for f in s.get("declarationFragments", [])).replace("\n", " ")
            path = ".".join(s["pathComponents"])
            byid[s["identifier"]["precise"]] = path
            lines.add(f"{path}: {' '.join(decl.split())}")
        for r in graph.get("relationships", []):
            if r["kind"] != "conformsTo" or r["source"] not in byid or r["target"] in IMPLICIT:
                continue
            target = r.get("targetFallback") or r["target"]
            lines.add(f"{byid[r['source']]} conforms to {target.split('.')[-1]}")
    with open(os.path.join(out, module + ".txt"), "w") as f:
        f.write("".join(line + "\n" for line in sorted(lines)))
PY
case $mode in
update)
    rm -f api/*.txt; mkdir -p api; cp "$listing"/*.txt api/
    echo "api/: $(cat api/*.txt | wc -l) public declarations and conformances in $(ls api/*.txt | wc -l) modules"
    ;;
check)
    if ! diff -ru api "$listing" > "$graphs/diff"; then
        sed "s|$listing|(the code)|g" "$graphs/diff"
        echo "error: the public API differs from api/ (above). If the change is deliberate, run" \
            "'scripts/public-api.sh update' and commit api/ with it." >&2
        exit 1
    fi
    # The backend plumbing stays out of the public API whatever the listing says: builder staging, raw stored
    # records, change-log state, chunk cursors and work claims are `package` or `@_spi(RouteKitBackend)`.
    if grep -E "promoteStaging|dropStaging|appendToBuilder|StoredRecord|ChangeLogState|CommitSignal|ChunkCursor|StoredChunk|WorkClaim|claimWork" api/*.txt; then
        echo "error: backend plumbing in the public API (above)" >&2
        exit 1
    fi
    echo "public API unchanged: $(cat api/*.txt | wc -l) declarations and conformances in api/"
    ;;
*) echo "usage: scripts/public-api.sh check|update" >&2; exit 2 ;;
esac
