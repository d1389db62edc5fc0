#!/usr/bin/env bash
# systemd-analyze verify on the units, as installed: in a root folder holding
# the system's own units, the units and the built programs at the paths
# ExecStart names. Then
# the coordinator again with its PostgreSQL drop-in. Any warning (an unknown
# key, a bad value) fails too.
# Usage: verify.sh PROGRAM... (the built tunefleet-coordinator and tunefleet-worker)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(mktemp -d)"
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/etc/systemd/system" "$root/usr/lib/systemd" "$root/usr/local/bin"
cp -r /usr/lib/systemd/system "$root/usr/lib/systemd/"
cp "$here"/*.service "$root/etc/systemd/system/"
for program in "$@"; do
  ln "$program" "$root/usr/local/bin/" 2>/dev/null || cp "$program" "$root/usr/local/bin/"
done
verify() {
  local output
  output="$(systemd-analyze verify --root="$root" --man=no "$@" 2>&1)" || { echo "$output"; exit 1; }
  if [ -n "$output" ]; then echo "$output"; exit 1; fi
  echo "verified: $*"
}
verify tunefleet-coordinator.service tunefleet-worker@cpu.service tunefleet-worker@gpu.service
dropins="$root/etc/systemd/system/tunefleet-coordinator.service.d"
mkdir -p "$dropins"
cp "$here/coordinator-postgresql.conf" "$dropins/postgresql.conf"
verify tunefleet-coordinator.service
