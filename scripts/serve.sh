#!/usr/bin/env bash
# `make serve`: builds routekit as `make install` does (release, --traits Postgres,Server, in .build-install), makes a
# store in .serve/ when there is none and a read/write token for it (kept in .serve/token, readable by you only, for
# the next runs), prints the web view's address and the token to paste into it, and runs `routekit serve` on that
# store until Ctrl-C. `make serve ARGS='--port 9000'` passes options on; ROUTEKIT_ variables and --config work as for
# any serve (`routekit serve --help`). SERVE_DIR moves the folder; deleting it starts afresh.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
dir=${SERVE_DIR:-.serve}
scratch=${INSTALL_SCRATCH:-.build-install}
$SWIFT build -c release --traits Postgres,Server --product routekit --scratch-path "$scratch"
bin=$scratch/release/routekit
mkdir -p "$dir"
store=$dir/store.sqlite
token_file=$dir/token
# A token is good only in the store that holds its hash: a new store gets a new token.
[ -f "$store" ] || rm -f "$token_file"
if [ ! -s "$token_file" ]; then
    (
        umask 077
        "$bin" tokens create --store "$store" --source make-serve --scope read,write --name "make serve" \
            >"$token_file.new"
        mv "$token_file.new" "$token_file"
    )
fi
token=$(cat "$token_file")
# Where it will listen, as serve resolves it (options, ROUTEKIT_HOST / ROUTEKIT_PORT, --config, defaults).
settings=$("$bin" serve --store "$store" --print-config "$@")
host=$(sed -n 's/^host = \(.*\) (.*)$/\1/p' <<<"$settings")
port=$(sed -n 's/^port = \([0-9]*\) (.*)$/\1/p' <<<"$settings")
case $host in
0.0.0.0 | "") host=127.0.0.1 ;;
:: | "[::]") host="[::1]" ;;
*:*) host="[$host]" ;;
esac
if [ "$port" = 0 ]; then
    address="http://$host:PORT/ (PORT: the one serve prints below)"
else
    address="http://$host:$port/"
fi
cat <<TEXT

== The web view: open $address in a browser and paste this read/write token (kept in $token_file):

   $token

== The API with it (the store is $store; import into it with: $bin import --store $store sample-routes/):
   curl -H "Authorization: Bearer \$(cat $token_file)" --data-binary @sample-routes/morning-run.gpx \\
       '${address%% *}v1/uploads?name=morning-run.gpx'
   curl -N -H "Authorization: Bearer \$(cat $token_file)" -H 'Accept: text/event-stream' '${address%% *}v1/changes'

== Ctrl-C stops the server.

TEXT
exec "$bin" serve --store "$store" "$@"
