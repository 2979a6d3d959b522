#!/usr/bin/env bash
# `make install` and `make install-systemd`.
#
#   scripts/install.sh binary    builds a release routekit with every trait (--traits Postgres,Server: the HTTP
#                                service and the PostgreSQL store) in .build-install, and installs it as
#                                $DESTDIR$PREFIX/bin/routekit
#   scripts/install.sh systemd   installs deploy/routekit.service as $DESTDIR$PREFIX/lib/systemd/system/routekit.service
#                                (its ExecStart pointed at $PREFIX/bin/routekit) and deploy/routekit.sysusers as
#                                $DESTDIR$PREFIX/lib/sysusers.d/routekit.conf; enables and starts nothing
#
# PREFIX defaults to /usr/local, DESTDIR to nothing (packagers set it). Run it as yourself: the build stays yours,
# and only the copies are made with sudo when the destination is not writable (set PREFIX=$HOME/.local to need none).
# INSTALL_FLAGS adds flags to the build (--static-swift-stdlib, for one: otherwise the binary loads the Swift runtime
# from the toolchain that built it, which must stay where it is and be readable by the service's user).
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
PREFIX=${PREFIX:-/usr/local}
DESTDIR=${DESTDIR:-}
scratch=${INSTALL_SCRATCH:-.build-install}

# Runs "$@", with sudo when the folder $1 (or its nearest existing parent) is not writable by this user.
as_owner() {
    local dir=$1
    shift
    local probe=$dir
    while [ ! -e "$probe" ]; do probe=$(dirname "$probe"); done
    if [ -w "$probe" ] || [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        echo "install: $dir is not writable by $(id -un); run this as its owner, or set PREFIX (PREFIX=\$HOME/.local)" >&2
        exit 1
    fi
}

case ${1:-binary} in
binary)
    # shellcheck disable=SC2086 # $INSTALL_FLAGS holds several flags
    $SWIFT build -c release --traits Postgres,Server --product routekit --scratch-path "$scratch" ${INSTALL_FLAGS:-}
    bin=$DESTDIR$PREFIX/bin
    as_owner "$bin" install -d "$bin"
    as_owner "$bin" install -m 0755 "$scratch/release/routekit" "$bin/routekit"
    echo "install: $bin/routekit, $("$bin/routekit" --version) with the HTTP service and the PostgreSQL store"
    case ":$PATH:" in
    *":$PREFIX/bin:"*) ;;
    *) [ -n "$DESTDIR" ] || echo "install: $PREFIX/bin is not on your PATH" ;;
    esac
    ;;
systemd)
    units=$DESTDIR$PREFIX/lib/systemd/system
    users=$DESTDIR$PREFIX/lib/sysusers.d
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    sed "s|/usr/local/bin/routekit|$PREFIX/bin/routekit|g" deploy/routekit.service >"$tmp/routekit.service"
    as_owner "$units" install -d "$units" "$users"
    as_owner "$units" install -m 0644 "$tmp/routekit.service" "$units/routekit.service"
    as_owner "$users" install -m 0644 deploy/routekit.sysusers "$users/routekit.conf"
    echo "install: $units/routekit.service and $users/routekit.conf"
    if [ -z "$DESTDIR" ]; then
        cat <<NEXT
Then (README "Running it as a service"):
  sudo systemd-sysusers                      # makes the user routekit (home /var/lib/routekit)
  sudo systemctl daemon-reload
  sudo systemctl enable --now routekit       # serves /var/lib/routekit/routekit.sqlite on 127.0.0.1:8080
  sudo -u routekit $PREFIX/bin/routekit tokens create --store /var/lib/routekit/routekit.sqlite \\
      --source phone --scope read,write      # prints the token once
NEXT
    fi
    ;;
*)
    echo "usage: scripts/install.sh binary|systemd" >&2
    exit 64
    ;;
esac
