#!/usr/bin/env bash
# Contract check of the OpenAPI document through a generated client (issue 29, item 3):
#   1. openapi-spec-validator (PyPI) validates Sources/RouteKitServer/openapi.yaml as OpenAPI 3.1;
#   2. openapi-python-client (PyPI) generates a Python client from it into a temporary folder, and every operation of
#      the document (its operationId) must have been generated;
#   3. that client, against a running `routekit serve` on a temporary store with a read-write token, uploads a GPX
#      file, lists workouts and routes, reads the workout's stats, exports the route in every format, reads its
#      locations as NDJSON and reads the change feed with an anchor (scripts/openapi-client-check.py).
# The validator is required. When openapi-python-client cannot be installed (no network), steps 2 and 3 are skipped,
# saying so, and the script ends with 0.
#
#   scripts/openapi-client-check.sh [ROUTEKIT]
#
# ROUTEKIT defaults to the debug build of `make test-server` (.build-full/debug/routekit).
set -euo pipefail
cd "$(dirname "$0")/.."
RK=${1:-.build-full/debug/routekit}
SPEC=Sources/RouteKitServer/openapi.yaml
GPX=sample-routes/lunch-ride.gpx

pip_install() { python3 -m pip install -q --disable-pip-version-check "$@"; }

# 1. The document.
command -v openapi-spec-validator >/dev/null || pip_install openapi-spec-validator
openapi-spec-validator "$SPEC"

# 2. The generated client.
if ! command -v openapi-python-client >/dev/null && ! pip_install openapi-python-client; then
    echo "openapi-client-check: openapi-python-client cannot be installed (no network?): the generated client's check is skipped" >&2
    exit 0
fi
[[ -x $RK ]] || { echo "no executable $RK (run: make test-server)" >&2; exit 2; }
TMP=$(mktemp -d)
PID=""
trap '[[ -n $PID ]] && kill $PID 2>/dev/null; rm -rf "$TMP"' EXIT
# --meta none: the package alone (no pyproject), imported from $TMP as routekit_client.
if ! openapi-python-client generate --path "$SPEC" --output-path "$TMP/routekit_client" --meta none \
    >"$TMP/generate.log" 2>&1; then
    cat "$TMP/generate.log" >&2
    echo "openapi-client-check: openapi-python-client could not generate a client from $SPEC" >&2
    exit 1
fi
# What the generator could not type (content types other than JSON: GPX, FIT, NDJSON, pictures) is said, not fatal:
# those answers are read as bytes below.
grep -E "^(Unsupported content type|Cannot parse response)" "$TMP/generate.log" | sed 's/ <openapi_python_client[^>]*>//' \
    | sort | uniq -c | sed 's/^/openapi-client-check: generator: /' >&2 || true
python3 scripts/openapi-client-check.py operations "$SPEC" "$TMP/routekit_client"

# 3. The client against a live server: an empty store, a token that reads and writes.
TOKEN=$("$RK" tokens create --store "$TMP/s.sqlite" --source openapi-client --scope read,write 2>/dev/null)
PORT=$((20000 + RANDOM % 20000))
"$RK" serve --store "$TMP/s.sqlite" --port $PORT --log-level warning 2>"$TMP/serve.log" &
PID=$!
for _ in $(seq 100); do
    curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break
    kill -0 $PID 2>/dev/null || { cat "$TMP/serve.log" >&2; exit 1; }
    sleep 0.1
done
if ! python3 scripts/openapi-client-check.py live "$TMP" routekit_client "http://127.0.0.1:$PORT" "$TOKEN" "$GPX"; then
    echo "openapi-client-check: the server's log:" >&2
    cat "$TMP/serve.log" >&2
    exit 1
fi
