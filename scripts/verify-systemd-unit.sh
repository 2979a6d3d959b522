#!/usr/bin/env bash
# Checks deploy/routekit.service with `systemd-analyze verify` (CI runs it when systemd-analyze is installed): on a
# copy whose ExecStart is a routekit that exists (the one given, else the first one built, else /bin/true), so that
# only the unit itself is judged. Fails on any message about the unit (an unknown key, a value that does not parse:
# verify reports those but still exits 0) and on verify's own failure.
#
#   scripts/verify-systemd-unit.sh [ROUTEKIT]
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v systemd-analyze >/dev/null 2>&1; then
    echo "verify-systemd-unit: systemd-analyze is not installed; skipped"
    exit 0
fi
binary=${1:-}
if [ -z "$binary" ]; then
    for candidate in .build-install/release/routekit .build-full/debug/routekit .build/release/routekit \
        .build/debug/routekit; do
        if [ -x "$candidate" ]; then
            binary=$PWD/$candidate
            break
        fi
    done
fi
[ -n "$binary" ] || binary=/bin/true
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
sed "s|/usr/local/bin/routekit|$binary|g" deploy/routekit.service >"$dir/routekit.service"
status=0
output=$(systemd-analyze verify "$dir/routekit.service" 2>&1) || status=$?
[ -z "$output" ] || echo "$output"
if [ "$status" -ne 0 ] || grep -q "routekit.service" <<<"$output"; then
    echo "error: systemd-analyze verify finds fault with deploy/routekit.service (above)" >&2
    exit 1
fi
echo "verify-systemd-unit: deploy/routekit.service verified (ExecStart=$binary serve)"
