#!/bin/bash
# One device call: check every configuration on the GPU, then time them against PyTorch.
#   bash bench/attention/run_device.sh [check|bench|all]   (OUT: where logs go)
# Uses .carry/attention/attention.so (built here, see attention_lib.cu); rebuilds it on the
# device if it does not load there.
set -o pipefail
mode=${1:-all}
out=${OUT:-/tmp}
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
lib=.carry/attention/attention.so
if ! python3 -c "import ctypes, sys; ctypes.CDLL(sys.argv[1])" "$lib"; then
  lib=/tmp/attention.so
  nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -Xcompiler -fPIC -shared \
    bench/attention/attention_lib.cu -lcuda -o "$lib" || exit 1
fi
if [ "$mode" != bench ]; then
  timeout 150 python3 bench/attention/bench.py "$lib" check 2>&1 | tee "$out/check.log" || exit 1
fi
if [ "$mode" != check ]; then
  timeout 300 python3 bench/attention/bench.py "$lib" bench 2>&1 | tee "$out/bench.log"
fi
