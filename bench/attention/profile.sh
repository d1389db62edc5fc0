#!/bin/bash
# On the GPU host: Nsight Compute profiles of bench/attention/profile.py's kernels (ours, given
# as configurations, and PyTorch's cuDNN and flash ones) and the SASS of ours, into OUT:
#   report.ncu-rep   the profile (speed of light, pipes, warp states, instruction mix,
#                    scheduler, memory, per-instruction stall samples)
#   details.txt      its details page; source.csv: per-SASS-instruction counters and stalls
#   sass.txt         cuobjdump's SASS of our profiled templates
#   bash bench/attention/profile.sh LIB.so CONFIG...   (OUT: where the files go)
set -o pipefail
lib=$1
shift
out=${OUT:-/tmp}
here=$(cd "$(dirname "$0")" && pwd)
sections="SpeedOfLight ComputeWorkloadAnalysis WarpStateStats InstructionStats SchedulerStats
  MemoryWorkloadAnalysis LaunchStats Occupancy SourceCounters"
timeout 200 ncu --clock-control none --profile-from-start off --target-processes all \
  $(for s in $sections; do echo --section "$s"; done) -f -o "$out/report" \
  python3 "$here/profile.py" "$lib" "$@" >"$out/ncu.log" 2>&1
echo "ncu: exit $?"
tail -3 "$out/ncu.log"
ncu -i "$out/report.ncu-rep" --page details --print-details all >"$out/details.txt" 2>&1
ncu -i "$out/report.ncu-rep" --page source --csv --print-source sass >"$out/source.csv" 2>&1
gzip -f "$out/source.csv"
# The short story: each kernel's name, time, SM and tensor-pipe throughput, top stall reasons.
grep -E "^  [^ ].*\(|Duration|Compute \(SM\) Throughput|Registers Per|Block Size|Grid Size|\
Shared Memory Config|Dynamic Shared|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|\
L2 Cache Throughput|DRAM Throughput|Executed Ipc A|[Tt]ensor" "$out/details.txt" | cut -c1-150
# Our templates' SASS.
cuobjdump -sass "$lib" | awk -v want="$*" '
  BEGIN { n = split(want, w, " "); for (i = 1; i <= n; ++i) { split(w[i], f, ",");
          keys[i] = "Li128ELi" f[1] "ELi" f[2] "ELi" f[3] "ELi" f[4] "ELi" f[5] "E" } }
  /Function : / { keep = 0; if ($0 ~ /13__nv_bfloat16Li128E/) for (i = 1; i <= n; ++i)
                  if (index($0, keys[i])) keep = 1 }
  keep' >"$out/sass.txt"
echo "sass: $(grep -c GMMA "$out/sass.txt") GMMA lines, $(grep -cE 'LDL|STL' "$out/sass.txt") LDL/STL"
