#!/usr/bin/env bash
# On the GPU host: tunes the Hopper GEMM specs through TuneFleet itself (bench/tune_specs.sh)
# and writes each problem's winner to
# OUT_DIR/winners.txt as "DTYPE MxNxK KEY=VALUE,..." lines, for table.sh to time against
# cuBLAS, and the distinct winning configurations to OUT_DIR/winners_configs.txt. The harness
# that table.sh runs is built off the GPU host with those (build.sh
# OUT_DIR/winners_configs.txt), so the GPU host needs no compiler.
# With SEARCH_MAX=N, each problem tunes N randomly sampled configurations (seed 1) instead
# of all of them, to fit a short GPU lease.
#   [SEARCH_MAX=N] bench/hopper_gemm/tune.sh CARRY_DIR OUT_DIR [SPEC...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
carry="$1" out="$2"
shift 2
specs=("$@")
if ((${#specs[@]} == 0)); then
  specs=("$here/../../examples/cuda/hopper_gemm/hopper_gemm_f16_tn.yaml"
         "$here/../../examples/cuda/hopper_gemm/hopper_gemm_bf16_tn.yaml")
fi
SEARCH=${SEARCH_MAX:+"{strategy: random, max_candidates: $SEARCH_MAX, seed: 1}"} \
  WINNER_PROBLEM='{M}x{N}x{K}' bash "$here/../tune_specs.sh" "$carry" "$out" "${specs[@]}"
cut -d' ' -f3 "$out/winners.txt" | sort -u >"$out/winners_configs.txt"
