#!/usr/bin/env bash
# On the GPU host: times each tuned winner of WINNERS (tune.sh's winners.txt) against
# cublasGemmEx in the same process, with the harness built by build.sh from those winners,
# and prints the README's table. The two are timed in alternation, sample by sample, and
# the ratio is the median of the samples' ratios (cuBLAS time / ours).
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
row = None
for line in sys.stdin:
    f = line.split()
    if len(f) == 10 and f[0] == shape and f[3] != "cublasGemmEx" and f[-1] == "ok":
        row = f
if row is None:
    print(f"| {shape} | {dtype} | {config} | failed | | |")
else:
    print(f"| {shape} | {dtype} | {config} | {float(row[5]):.0f} | {float(row[6]):.0f} | {row[7]} |")
' "$dtype" "$shape" "$config"
done <"$winners"
