#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (into build-fuzz/, FUZZ_BUILD_DIR
# overrides) and runs each for SECONDS (default 60) on a copy of its seed
# corpus in tests/fuzz/corpus/. Prints executions and findings per target;
# findings (crash-*, timeout-*, leak-*, oom-*) are kept under the work folder
# and make the script exit 1.
#   tests/fuzz/run.sh [SECONDS] [TARGET...]     TARGET: spec expr rpc
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${FUZZ_BUILD_DIR:-$root/build-fuzz}"
seconds="${1:-60}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(spec expr rpc)
cxx="${FUZZ_CXX:-clang++-14}"

launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER="$cxx" -DTF_FUZZ=ON "${launcher[@]}" >/dev/null
ninja -C "$build" "${targets[@]/%/_fuzz}"

work="$build/fuzz-runs/$(date -u +%Y%m%dT%H%M%SZ)"
failed=0
printf '%-6s %12s %10s %9s  %s\n' target executions exec/s findings "corpus (start -> end)"
for t in "${targets[@]}"; do
  dir="$work/$t"
  mkdir -p "$dir/corpus" "$dir/findings"
  start_size=$(ls "$root/tests/fuzz/corpus/$t" | wc -l)
  # -timeout: an input running longer than 10 s is a hang finding.
  (cd "$dir" && "$build/tests/fuzz/${t}_fuzz" corpus "$root/tests/fuzz/corpus/$t" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$dir/findings/" >"$dir/log" 2>&1) || true
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log")
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$dir/log")
  findings=$(ls "$dir/findings" | wc -l)
  end_size=$(($(ls "$dir/corpus" | wc -l) + start_size))
  printf '%-6s %12s %10s %9s  %s -> %s\n' "$t" "${execs:-?}" "${rate:-?}" "$findings" \
    "$start_size" "$end_size"
  if [ "$findings" -gt 0 ] || [ -z "$execs" ]; then
    failed=1
    echo "  $t: see $dir/log and $dir/findings/" >&2
  fi
done
exit $failed
