#!/usr/bin/env bash
# Peak memory of `routekit import` and of `routekit serve` answering one upload, for each payload that
# hostile-payloads.py writes (issue 25: "no more than 64 MiB above the idle process for any single upload").
#
#   hostile-memory.sh PAYLOADS [ROUTEKIT]
#
#   PAYLOADS   the folder hostile-payloads.py wrote
#   ROUTEKIT   a release routekit with the Server trait (default .build-release/release/routekit:
#              `swift build -c release --traits Server --product routekit --scratch-path .build-release`)
#
# CLI: the peak RSS of the whole command (GNU time's maxrss), a new store each time, and of `routekit --help`.
# Server: a new server per payload on a new SQLite store, warmed with one small upload; VmRSS then is "idle", and the
# server's peak (VmHWM) after the payload's upload is answered. Prints the HTTP status of each upload.
set -euo pipefail
P=${1:?usage: hostile-memory.sh PAYLOADS [ROUTEKIT]}
RK=${2:-.build-release/release/routekit}
[ -x "$RK" ] || { echo "hostile-memory.sh: $RK not found (see the usage at the top)" >&2; exit 2; }
DIR=$(mktemp -d /tmp/routekit-hostile.XXXXXX)
PID=
trap '[ -n "$PID" ] && kill $PID 2>/dev/null; rm -rf "$DIR"' EXIT
payloads="tcx-padded.tcx.gz gpx-padded.gpx.gz big-entry.zip health-event.zip zip64-2p63.zip fit-big.fit.gz gz-entry.zip fit-gz-entry.zip"
kib() { awk "/$1/{print \$2}" /proc/$PID/status; }
echo "payload | bytes | CLI peak RSS (MiB) | CLI exit | server idle RSS (MiB) | server peak (MiB) | above idle (MiB) | HTTP"
echo "--- | --- | --- | --- | --- | --- | --- | ---"
/usr/bin/time -f "%M" -o "$DIR/help.rss" "$RK" --help >/dev/null
for f in $payloads; do
    rm -f "$DIR"/cli.sqlite*
    status=0
    /usr/bin/time -f "%M" -o "$DIR/cli.rss" "$RK" import --store "$DIR/cli.sqlite" "$P/$f" >/dev/null 2>&1 || status=$?
    cli=$(tail -1 "$DIR/cli.rss" | awk '{printf "%.1f", $1 / 1024}')
    rm -f "$DIR"/srv.sqlite*
    token=$("$RK" tokens create --store "$DIR/srv.sqlite" --source phone --scope read,write 2>/dev/null)
    "$RK" serve --store "$DIR/srv.sqlite" --port 0 --log-level warning >"$DIR/serve.log" 2>&1 &
    PID=$!
    for _ in $(seq 100); do grep -q 'listening on' "$DIR/serve.log" && break; sleep 0.1; done
    port=$(grep -o 'http://127.0.0.1:[0-9]*' "$DIR/serve.log" | head -1 | sed 's/.*://')
    printf '<gpx version="1.1" creator="w" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg><trkpt lat="1" lon="2"><time>2024-01-01T00:00:00Z</time></trkpt><trkpt lat="1.1" lon="2"><time>2024-01-01T00:00:01Z</time></trkpt></trkseg></trk></gpx>' >"$DIR/warm.gpx"
    curl -s -o /dev/null -H "Authorization: Bearer $token" --data-binary @"$DIR/warm.gpx" "http://127.0.0.1:$port/v1/uploads?name=warm.gpx"
    sleep 0.5
    idle=$(kib VmRSS)
    http=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $token" --data-binary @"$P/$f" \
        "http://127.0.0.1:$port/v1/uploads?name=$f")
    peak=$(kib VmHWM)
    curl -s -o /dev/null --max-time 5 "http://127.0.0.1:$port/healthz" || http="$http (server gone)"
    kill $PID; wait $PID 2>/dev/null || true; PID=
    printf '%s | %s | %s | %s | %.1f | %.1f | %.1f | %s\n' "$f" "$(stat -c %s "$P/$f")" "$cli" "$status" \
        "$(echo "$idle / 1024" | bc -l)" "$(echo "$peak / 1024" | bc -l)" "$(echo "($peak - $idle) / 1024" | bc -l)" "$http"
done
echo
echo "routekit --help: $(awk '{printf "%.1f", $1 / 1024}' "$DIR/help.rss") MiB peak RSS"
