#!/usr/bin/env bash
# The second CI build: everything compiled by clang with AddressSanitizer and
# UndefinedBehaviorSanitizer (any report fails the run), into build-asan/
# (ASAN_BUILD_DIR overrides). Runs the unit tests under it, then each libFuzzer
# target of tests/fuzz for FUZZ_SECONDS (default 20) from the same build.
# The integration tests (and benchmarks) are left to the normal build: under
# the sanitizers their multi-process jobs take longer than CI's budget, so
# only the unit tests and the programs they start are built here.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${ASAN_BUILD_DIR:-$root/build-asan}"
bash "$root/scripts/install-deps.sh"
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
# -O1 and line tables only: what the sanitizers' reports need, built faster.
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
  -DCMAKE_CXX_COMPILER=clang++-14 -DTF_FUZZ=ON "${launcher[@]}" >/dev/null
ninja -C "$build" unit_tests
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
(cd "$build" && ctest --output-on-failure --timeout 900 -L unit)
FUZZ_BUILD_DIR="$build" bash "$root/tests/fuzz/run.sh" "${FUZZ_SECONDS:-20}"
