#!/usr/bin/env bash
# Builds the harness for the configurations listed in a config file (one TuneFleet-style
# KEY=VALUE,... line each; default configs.txt), for sm_90a and sm_80 in one binary, plus a
# compute_80 PTX-only binary that runs the Ampere path on a Hopper GPU. ptxas reports go to
# ptxas.log and ptxas_sm80.log; missing CLUSTER_M, TMA_STORE, SPLIT_K and STREAM_K default to
# 1, 0, 1 and 0.
#   bench/hopper_gemm/build.sh [configs.txt] [out dir, default build/hopper_gemm]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
configs=${1:-$here/configs.txt}
out=${2:-$root/build/hopper_gemm}
mkdir -p "$out"
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}

# KEY=VALUE lines -> HG_CONFIG(BM, BN, BK, STAGES, CONSUMERS, WS, GROUP_M, CLUSTER_M, TMA_STORE,
# SPLIT_K, STREAM_K)
grep -v '^\s*\(#\|$\)' "$configs" | while IFS= read -r line; do
  declare -A v=([CLUSTER_M]=1 [TMA_STORE]=0 [SPLIT_K]=1 [STREAM_K]=0)
  for kv in ${line//,/ }; do v[${kv%%=*}]=${kv#*=}; done
  echo "HG_CONFIG(${v[BM]}, ${v[BN]}, ${v[BK]}, ${v[STAGES]}, ${v[CONSUMERS]}, ${v[WS]}, ${v[GROUP_M]}, ${v[CLUSTER_M]}, ${v[TMA_STORE]}, ${v[SPLIT_K]}, ${v[STREAM_K]})"
done >"$out/configs.inc"

flags=(-O3 -std=c++17 -I"$out" -Xptxas -v -lcublas -lcuda -L/usr/local/cuda/lib64/stubs)
"$nvcc" "${flags[@]}" -gencode=arch=compute_90a,code=sm_90a -gencode=arch=compute_80,code=sm_80 \
  "$here/gemm_vs_cublas.cu" -o "$out/gemm_vs_cublas" 2>"$out/ptxas.log" &
# PTX only: the driver JITs it for the GPU at hand (sm_80 machine code does not run on sm_90).
"$nvcc" "${flags[@]}" -gencode=arch=compute_80,code=compute_80 \
  "$here/gemm_vs_cublas.cu" -o "$out/gemm_vs_cublas_sm80" 2>"$out/ptxas_sm80.log" &
wait -n && wait -n || { cat "$out"/ptxas*.log | grep -v -e '^ptxas info' -e 'bytes stack frame' >&2; exit 1; }
# Spills, local memory or an ignored setmaxnreg would show here.
grep -h -e 'spill' -e 'C7508' -e 'warning' "$out"/ptxas*.log | grep -v ' 0 bytes spill' | sort | uniq -c || true
echo "built $out/gemm_vs_cublas and $out/gemm_vs_cublas_sm80 ($(wc -l <"$out/configs.inc") configs)"
