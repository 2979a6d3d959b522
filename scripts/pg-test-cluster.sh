#!/usr/bin/env bash
# Starts, restarts and stops a throwaway PostgreSQL cluster for the test suite.
#
#   scripts/pg-test-cluster.sh start DIR     # initdb into DIR/data, start it, create routekit_test,
#                                            # print the connection URL (the only line on stdout)
#   scripts/pg-test-cluster.sh restart DIR   # pg_ctl restart -m fast -w, same port and options
#   scripts/pg-test-cluster.sh stop DIR      # pg_ctl stop -m fast, then remove DIR
#
#   export ROUTEKIT_TEST_POSTGRES=$(scripts/pg-test-cluster.sh start /tmp/routekit-pg)
#   ROUTEKIT_PG_FSYNC=off scripts/pg-test-cluster.sh start DIR   # fsync off (the test suites: see .ci/run)
#
# A test that needs to bounce the server should run exactly:
#   scripts/pg-test-cluster.sh restart DIR
# (it runs `pg_ctl -D DIR/data -l DIR/log -o OPTS restart -m fast -w` as the right user; the port,
# and so the URL, stay the same). Connections open before it are dropped by the fast shutdown.
#
# The cluster trusts every connection (no password) but listens on 127.0.0.1 and a socket in DIR
# only. PostgreSQL refuses to run as root, so as root (CI) the server runs as the system user
# routekit-pg, created if missing; DIR and its parents must then be reachable by that user
# (/tmp/... is fine, /root/... is not). Progress and errors go to stderr.
set -euo pipefail

PG_USER=routekit-pg   # only used when run as root
DB_USER=routekit
DB_NAME=routekit_test
FIRST_PORT=54329

log() { echo "pg-test-cluster: $*" >&2; }
die() { log "error: $*"; exit 1; }

[ $# -eq 2 ] || die "usage: $0 start|restart|stop DIR"
CMD=$1
# pg_ctl passes -o through a shell, so keep DIR to plain path characters.
[[ $2 =~ ^[A-Za-z0-9._/-]+$ ]] || die "DIR must only contain letters, digits, '.', '_', '-' and '/'"
DIR=$(realpath -m -- "$2")
[ "$DIR" != / ] || die "refusing to use / as DIR"

# Server binaries: initdb/pg_ctl on PATH, else the newest /usr/lib/postgresql/<ver>/bin (Debian
# does not put them on PATH). Resolve symlinks so psql is taken from the same installation.
if command -v initdb >/dev/null && command -v pg_ctl >/dev/null; then
    BIN=$(dirname "$(readlink -f "$(command -v pg_ctl)")")
else
    BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
    [ -n "$BIN" ] || die "initdb/pg_ctl not found (apt-get install -y postgresql)"
fi
PG_CTL=$BIN/pg_ctl
INITDB=$BIN/initdb
[ -x "$INITDB" ] || INITDB=$(command -v initdb) || die "initdb not found"
PSQL=$BIN/psql
[ -x "$PSQL" ] || PSQL=$(command -v psql) || die "psql not found"

# as_pg CMD...: run CMD as the cluster owner (ourselves, or $PG_USER when we are root).
if [ "$(id -u)" -eq 0 ]; then
    as_pg() {
        if command -v runuser >/dev/null; then
            runuser -u "$PG_USER" -- "$@"
        else
            su -s /bin/bash "$PG_USER" -c "$(printf '%q ' "$@")"
        fi
    }
else
    as_pg() { "$@"; }
fi
cd /   # so the server user never starts in a directory it cannot read (e.g. /root)

# Server options shared by start and restart; $1 is the port.
server_opts() {
    local tls=""
    if [ -f "$DIR/data/server.crt" ]; then tls=" -c ssl=on"; fi
    # One line: pg_ctl hands the options to a shell, where a newline would end the command. fsync as
    # $ROUTEKIT_PG_FSYNC said at start, kept in DIR/fsync for restarts (on by default, as a real server runs: the
    # benchmarks' clusters; the tests' may turn it off, since no test outlives the machine's page cache).
    local fsync
    fsync=$(cat "$DIR/fsync" 2>/dev/null || echo on)
    echo "-c listen_addresses=127.0.0.1 -c port=$1 -c unix_socket_directories=$DIR" \
         "-c fsync=$fsync -c max_connections=200$tls"
}

case $CMD in
start)
    [ ! -e "$DIR/data" ] || die "$DIR/data already exists (stop it first: $0 stop $DIR)"
    mkdir -p "$DIR"
    if [ "$(id -u)" -eq 0 ]; then
        id -u "$PG_USER" >/dev/null 2>&1 ||
            useradd --system --no-create-home --shell /usr/sbin/nologin "$PG_USER"
        chown "$PG_USER": "$DIR"
        as_pg test -w "$DIR" || die "$PG_USER cannot write $DIR (is a parent directory private?)"
    fi

    log "initdb ($BIN) into $DIR/data"
    as_pg "$INITDB" -D "$DIR/data" --auth=trust --username="$DB_USER" \
        --encoding=UTF8 --no-locale >&2
    # TLS with a throwaway self-signed certificate, so the tests can check sslmode=require and verify-full
    # (without openssl the server runs without TLS and those tests say they are skipped).
    if command -v openssl >/dev/null 2>&1; then
        as_pg openssl req -new -x509 -days 7 -nodes -subj "/CN=localhost" \
            -keyout "$DIR/data/server.key" -out "$DIR/data/server.crt" >/dev/null 2>&1 &&
            as_pg chmod 600 "$DIR/data/server.key" || log "no TLS: openssl could not make a certificate"
    fi

    echo "${ROUTEKIT_PG_FSYNC:-on}" > "$DIR/fsync"
    # Take the first port from FIRST_PORT up that nobody answers on; if the server still loses
    # a race for it ("Address already in use"), move on to the next one.
    port=$FIRST_PORT
    while :; do
        [ "$port" -lt $((FIRST_PORT + 100)) ] || die "no free port in $FIRST_PORT..$port"
        if bash -c "</dev/tcp/127.0.0.1/$port" 2>/dev/null; then port=$((port + 1)); continue; fi
        log "starting on 127.0.0.1:$port (log: $DIR/log)"
        if as_pg "$PG_CTL" -D "$DIR/data" -l "$DIR/log" -o "$(server_opts "$port")" -w start >&2; then
            break
        fi
        grep -q 'Address already in use' "$DIR/log" 2>/dev/null ||
            die "server did not start, see $DIR/log"
        port=$((port + 1))
    done
    echo "$port" > "$DIR/port"

    "$PSQL" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U "$DB_USER" -d postgres \
        -c "CREATE DATABASE $DB_NAME" >&2
    echo "postgres://$DB_USER@127.0.0.1:$port/$DB_NAME"
    ;;
restart)
    [ -f "$DIR/port" ] || die "no cluster in $DIR (run: $0 start $DIR)"
    as_pg "$PG_CTL" -D "$DIR/data" -l "$DIR/log" -o "$(server_opts "$(cat "$DIR/port")")" \
        restart -m fast -w >&2
    ;;
stop)
    [ -e "$DIR" ] || { log "$DIR does not exist, nothing to stop"; exit 0; }
    # Only remove directories that look like ours, never an arbitrary tree given by mistake.
    [ -f "$DIR/port" ] || [ -f "$DIR/data/PG_VERSION" ] || [ -z "$(ls -A "$DIR")" ] ||
        die "$DIR does not look like a test cluster, not removing it"
    if [ -f "$DIR/data/postmaster.pid" ]; then
        as_pg "$PG_CTL" -D "$DIR/data" stop -m fast -w >&2 || log "pg_ctl stop failed, removing anyway"
    fi
    rm -rf -- "$DIR"
    log "stopped and removed $DIR"
    ;;
*)
    die "unknown command '$CMD' (start, restart or stop)"
    ;;
esac
