#!/usr/bin/env bash
# On the GPU host: times each tuned winner of WINNERS (tune.sh's winners.txt) against
# cublasGemmEx in the same process, with the harness built by build.sh from those winners,
# and prints the README's table.
#   bench/hopper_gemm/table.sh HARNESS WINNERS
set -euo pipefail
harness="$1" winners="$2"
printf '| shape (MxNxK) | dtype | tuned best (TuneFleet) | TFLOP/s | cuBLAS TFLOP/s | ratio |\n'
printf '| --- | --- | --- | --- | --- | --- |\n'
while read -r dtype shape config; do
  [ -n "$dtype" ] || continue
  timeout 120 "$harness" --shapes "$shape" --dtypes "$dtype" --layouts tn --config "$config" |
    python3 -c '
import sys
dtype, shape, config = sys.argv[1:4]
ours = cublas = None
for line in sys.stdin:
    f = line.split()
    if len(f) < 6 or f[0] != shape:
        continue
    if f[3] == "cublasGemmEx":
        cublas = float(f[5])
    elif f[-1] == "ok":
        ours = float(f[5])
if ours is None or cublas is None:
    print(f"| {shape} | {dtype} | {config} | failed | | |")
else:
    print(f"| {shape} | {dtype} | {config} | {ours:.0f} | {cublas:.0f} | {ours / cublas:.3f} |")
' "$dtype" "$shape" "$config"
done <"$winners"
