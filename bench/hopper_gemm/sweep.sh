#!/usr/bin/env bash
# On the GPU host, when there is no time for a tune through TuneFleet (tune.sh + table.sh): runs
# every configuration compiled into HARNESS (build.sh) at the issue's shapes, B N x K, f16 and
# bf16, each checked against the reference and timed in alternation with cublasGemmEx, keeps
# the raw lines in LOG, and prints per shape and dtype the best configuration that passed the
# check, as table.sh's table. Ratio = cuBLAS time / ours (median of the paired samples' ratios).
# TIMEOUT=SECONDS stops the harness after that long (a short GPU lease) and tables what it
# measured by then.
#   [TIMEOUT=S] bench/hopper_gemm/sweep.sh HARNESS LOG [SHAPES]
set -euo pipefail
harness="$1" log="$2"
shapes=${3:-1024x1024x1024,2048x2048x2048,4096x4096x4096,8192x8192x8192,4096x1024x8192,8192x8192x1024,3000x5000x2000}
# A harness that dies or is stopped part way still leaves a table of what it measured.
${TIMEOUT:+timeout "$TIMEOUT"} "$harness" --shapes "$shapes" --dtypes f16,bf16 --layouts tn \
  --reps 30 >"$log" || echo "harness exited with status $?" >&2
python3 - "$log" <<'PY'
import sys
best, order, failed = {}, [], 0
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) != 10 or f[0] == "shape" or f[0].startswith("#") or f[3] == "cublasGemmEx":
        continue
    key = (f[0], f[1])
    if key not in best:
        order.append(key)
        best[key] = None
    if f[-1] != "ok":
        failed += 1
        continue
    if best[key] is None or float(f[7]) > float(best[key][7]):
        best[key] = f
print("| shape (MxNxK) | dtype | best configuration (direct sweep) | TFLOP/s | cuBLAS TFLOP/s | ratio |")
print("| --- | --- | --- | --- | --- | --- |")
for shape, dtype in order:
    f = best[(shape, dtype)]
    if f is None:
        print(f"| {shape} | {dtype} | none passed | | | |")
    else:
        print(f"| {shape} | {dtype} | {f[3]} | {float(f[5]):.0f} | {float(f[6]):.0f} | {f[7]} |")
print(f"\n{failed} configuration runs failed the check")
PY
