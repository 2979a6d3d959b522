#!/usr/bin/env bash
# The documentation (`make docs`), in two steps; either fails the script.
# 1. The examples compile: every ```swift block of a DocC catalog (Sources/*/Documentation.docc/*.md) must be, character
#    for character, a `// snippet.NAME` … `// snippet.end` region of a test (de-indented to the marker's column), and
#    every such region must appear in a catalog. The tests compile those regions (most also run them): `make test`.
# 2. `docc convert` builds an archive for every library module with a catalog, from symbol graphs extracted from the
#    modules `make test` built (.build-full, --traits Postgres,Server, so that RouteKitPostgres and RouteKitServer have
#    their symbols; scripts/symbol-graphs.sh): no build of its own (the swift-docc-plugin rebuilt every module, about
#    2 minutes in CI), with --warnings-as-errors: a broken ``Symbol`` or <doc:Article> link, or any other docc
#    warning, fails. RouteKitClient is empty in a build without --traits Client (CI's): then its catalog is skipped,
#    saying so (its examples are still checked in step 1, and compiled by a build with the trait).
# The archives land in .build-full/docs/ (ROUTEKIT_DOCS_OUTPUT=DIR for another folder). ROUTEKIT_DOCS_SKIP_BUILD=1
# runs step 1 only; ROUTEKIT_DOCS_SCRATCH=DIR reads another scratch folder's modules.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
SCRATCH=${ROUTEKIT_DOCS_SCRATCH:-.build-full}

# 1. Examples.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/blocks" "$work/regions"
for f in Sources/*/Documentation.docc/*.md; do
    awk -v out="$work/blocks" -v src="$(echo "$f" | tr / %)" '
        /^```swift[[:space:]]*$/ { inside = 1; name = out "/" src ":" NR + 1; printf "" > name; next }
        inside && /^```[[:space:]]*$/ { inside = 0; close(name); next }
        inside { print >> name }' "$f"
done
for f in $(grep -rl --include='*.swift' '// snippet\.' Tests); do
    awk -v out="$work/regions" -v src="$(echo "$f" | tr / %)" '
        /^[[:space:]]*\/\/ snippet\.end[[:space:]]*$/ { inside = 0; close(name); next }
        /^[[:space:]]*\/\/ snippet\.[A-Za-z0-9_-]+[[:space:]]*$/ {
            inside = 1; indent = index($0, "/") - 1
            name = out "/" src ":" NR + 1; printf "" > name; next }
        inside { line = $0; print (length(line) > indent ? substr(line, indent + 1) : "") >> name }' "$f"
done
failed=0
(cd "$work/regions" && for r in *; do [ -e "$r" ] && echo "$(md5sum < "$r" | cut -c1-32) $r"; done) | sort > "$work/regions.txt"
(cd "$work/blocks" && for b in *; do [ -e "$b" ] && echo "$(md5sum < "$b" | cut -c1-32) $b"; done) | sort > "$work/blocks.txt"
while read -r hash block; do
    if ! grep -q "^$hash " "$work/regions.txt"; then
        echo "error: $(echo "$block" | tr % /): this swift block is no test's // snippet region; put it in one" \
            "(Tests/*/DocumentationExamplesTests.swift), so that it compiles, and keep the two identical" >&2
        failed=1
    fi
done < "$work/blocks.txt"
while read -r hash region; do
    if ! grep -q "^$hash " "$work/blocks.txt"; then
        echo "error: $(echo "$region" | tr % /): this // snippet region is in no catalog's swift block" >&2
        failed=1
    fi
done < "$work/regions.txt"
[ "$failed" = 0 ] || exit 1
echo "examples: $(wc -l < "$work/blocks.txt") swift blocks in the catalogs, each a test's snippet region"
[ "${ROUTEKIT_DOCS_SKIP_BUILD:-}" = 1 ] && exit 0

# 2. docc, for every library module with a catalog, from the symbol graphs of the modules `make test` built.
start=$(date +%s)
out=${ROUTEKIT_DOCS_OUTPUT:-$SCRATCH/docs}
graphs="$work/graphs"
ROUTEKIT_SYMBOLS_BUILD=$SCRATCH scripts/symbol-graphs.sh "$graphs" -emit-extension-block-symbols
count=0
for catalog in Sources/*/Documentation.docc; do
    module=$(basename "$(dirname "$catalog")")
    if [ "$module" = RouteKitClient ] && ! python3 -c \
        'import json, sys; sys.exit(0 if json.load(open(sys.argv[1]))["symbols"] else 1)' \
        "$graphs/$module/$module.symbols.json"; then
        echo "docs: $module skipped: its module in $SCRATCH has no public symbols (built without --traits Client)"
        continue
    fi
    mkdir -p "$out"
    if ! docc convert "$catalog" --additional-symbol-graph-dir "$graphs/$module" --fallback-display-name "$module" \
        --fallback-bundle-identifier "$module" --output-dir "$out/$module.doccarchive" --warnings-as-errors \
        > "$work/docc.log" 2>&1; then
        cat "$work/docc.log" >&2
        echo "error: docc failed for $module (above)" >&2
        exit 1
    fi
    count=$((count + 1))
done
echo "documentation of $count modules built in $(($(date +%s) - start)) s: $out/"
