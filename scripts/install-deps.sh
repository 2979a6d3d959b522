#!/usr/bin/env bash
# Installs the C libraries and tools RouteKit needs when they are missing:
#   GEOS (libgeos-dev, geos.pc), pkg-config, zlib (gzip-compressed GPX), libdeflate (gzip entries of archives), SQLite (the embedded store, through
#   GRDB), cairo (PNG output of `routekit render`) with a font (DejaVu), and the xmllint and sqlite3 tools (used by
#   tests).
# Debian/Ubuntu via apt-get (with sudo when not root), macOS via Homebrew. Does nothing when all are present.
set -euo pipefail

have_pc() { pkg-config --exists "$1" 2>/dev/null; }

missing=()
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
have_pc geos || missing+=(geos)
have_pc zlib || missing+=(zlib)
have_pc libdeflate || missing+=(libdeflate)
command -v xmllint >/dev/null 2>&1 || missing+=(xmllint)
have_pc sqlite3 || missing+=(sqlite3)
have_pc cairo || missing+=(cairo)
[ -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || [ "$(uname)" = Darwin ] || missing+=(fonts-dejavu)
command -v sqlite3 >/dev/null 2>&1 || missing+=(sqlite3-cli)

if [ ${#missing[@]} -eq 0 ]; then
    echo "install-deps: GEOS $(pkg-config --modversion geos), zlib $(pkg-config --modversion zlib), libdeflate $(pkg-config --modversion libdeflate), SQLite $(pkg-config --modversion sqlite3), cairo $(pkg-config --modversion cairo), pkg-config, xmllint and sqlite3 are present."
    exit 0
fi
echo "install-deps: missing: ${missing[*]}"

if command -v apt-get >/dev/null 2>&1; then
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq libgeos-dev pkg-config zlib1g-dev libdeflate-dev libxml2-utils libsqlite3-dev sqlite3 \
        libcairo2-dev fonts-dejavu-core
elif command -v brew >/dev/null 2>&1; then
    brew install geos pkg-config zlib libdeflate libxml2 sqlite cairo
else
    echo "install-deps: install GEOS (>= 3.10, with geos.pc), pkg-config, zlib, libdeflate (with libdeflate.pc), SQLite 3 (with sqlite3.pc), cairo (with cairo.pc), xmllint and sqlite3 with your package manager." >&2
    exit 1
fi
have_pc geos || { echo "install-deps: GEOS is still not visible to pkg-config (geos.pc)." >&2; exit 1; }
echo "install-deps: done (GEOS $(pkg-config --modversion geos))."
