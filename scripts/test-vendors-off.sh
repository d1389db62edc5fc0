#!/usr/bin/env bash
# The third CI build: every switchable vendor (each TF_VENDOR_<NAME> option
# of vendors/*/CMakeLists.txt) switched off, into build-vendors-off/
# (VENDORS_OFF_BUILD_DIR overrides). Builds the programs and the tests of the
# vendor tables, runs those tests, and checks that a switched-off vendor's
# device kind is unknown to the worker and its language unavailable to the
# CLI, so that code outside a vendor's folder cannot come to need it.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${VENDORS_OFF_BUILD_DIR:-$root/build-vendors-off}"
bash "$root/scripts/install-deps.sh"
off=()
for option in $(grep -ho 'option(TF_VENDOR_[A-Z0-9_]*' "$root"/vendors/*/CMakeLists.txt); do
  off+=("-D${option#option(}=OFF")
done
echo "vendors off: ${off[*]}"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${off[@]}" >/dev/null
tests=(devices_test vendor_tables_test toolchain_checks_test)
ninja -C "$build" tunefleet tunefleet-coordinator tunefleet-worker tunefleet-runner \
  "${tests[@]/#/tests/}"
for t in "${tests[@]}"; do "$build/tests/$t" --gtest_brief=1; done
expect() {  # expect TEXT COMMAND...: the command fails and prints TEXT
  local out
  if out="$("${@:2}" 2>&1)"; then
    echo "expected to fail: ${*:2}" >&2
    exit 1
  fi
  grep -qF "$1" <<<"$out" || { echo "'${*:2}' did not say '$1':" >&2; echo "$out" >&2; exit 1; }
}
expect "unknown device kind 'nvidia'; known kinds: cpu, replay" \
  "$build/bin/tunefleet-worker" --coordinator 127.0.0.1:1 --cache "$build/worker-cache" \
  --devices nvidia
expect "the cuda toolchain is not available in this build" \
  "$build/bin/tunefleet" compile "$root/examples/cuda/gemm/gemm.yaml"
expect "the hip toolchain is not available in this build" \
  "$build/bin/tunefleet" compile "$root/examples/hip/transpose/transpose.yaml"
echo "vendors off: the build, its tests and checks pass"
