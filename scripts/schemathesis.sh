#!/usr/bin/env bash
# Contract check of `routekit serve` against its OpenAPI document with schemathesis (PyPI): a server on a fresh
# store with the sample routes, a token with every scope, and generated requests for every operation. Fails on a
# server error (5xx) or a response outside the schema.
#
#   scripts/schemathesis.sh [ROUTEKIT] [EXAMPLES]
#
# ROUTEKIT defaults to the debug build of `make test-server` (.build-full/debug/routekit).
set -euo pipefail
cd "$(dirname "$0")/.."
RK=${1:-.build-full/debug/routekit}
EXAMPLES=${2:-25}
[[ -x $RK ]] || { echo "no executable $RK (run: make test-server)" >&2; exit 2; }
command -v st >/dev/null || python3 -m pip install -q schemathesis
TMP=$(mktemp -d)
PID=""
trap '[[ -n $PID ]] && kill $PID 2>/dev/null; rm -rf "$TMP"' EXIT
"$RK" import --no-progress --store "$TMP/s.sqlite" sample-routes >/dev/null
TOKEN=$("$RK" tokens create --store "$TMP/s.sqlite" --source schemathesis --scope read,write,admin 2>/dev/null)
PORT=$((20000 + RANDOM % 20000))
"$RK" serve --store "$TMP/s.sqlite" --port $PORT --log-level warning 2>"$TMP/serve.log" &
PID=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done
st --no-color run "http://127.0.0.1:$PORT/v1/openapi.yaml" --url "http://127.0.0.1:$PORT" \
    -H "Authorization: Bearer $TOKEN" --checks not_a_server_error,response_schema_conformance,status_code_conformance,content_type_conformance \
    --max-examples "$EXAMPLES" --generation-deterministic
