#!/bin/bash
# One device call: checks every configuration on the GPU against fp32 attention, tunes the
# D = 128 specs through TuneFleet (tune.sh, when CARRY_DIR holds its programs), then times
# TuneFleet's winners against PyTorch (bench.py's STAND_IN where TuneFleet gave none).
# SKIP_CHECK=1 leaves the check out (TuneFleet still checks every candidate it times).
#   [SKIP_CHECK=1] bash bench/attention/run_device.sh LIB.so [CARRY_DIR]   (OUT: where logs go)
set -o pipefail
lib=$1 carry=${2:-}
out=${OUT:-/tmp}
here=$(cd "$(dirname "$0")" && pwd)
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
if [ -z "${SKIP_CHECK:-}" ]; then
  timeout 120 python3 "$here/bench.py" "$lib" check >"$out/check.log" 2>&1
  echo "check: exit $?, $(grep -c PASS "$out/check.log") PASS, $(grep -c FAIL "$out/check.log") FAIL"
  grep FAIL "$out/check.log" | head -5
fi
winners=""
if [ -n "$carry" ]; then
  TUNE_TIMEOUT_S=${TUNE_TIMEOUT_S:-200} bash "$here/tune.sh" "$carry" /tmp/attention-tune \
    2>&1 | tee "$out/tune.log" && winners=/tmp/attention-tune/winners.txt
  tar -C /tmp -czf "$out/tune.tgz" attention-tune
  # A job cut short can leave its runner timing on the GPU for a while: wait for it to go.
  for _ in $(seq 30); do
    [ -z "$(nvidia-smi --query-compute-apps=pid --format=csv,noheader)" ] && break
    sleep 1
  done
fi
if [ ! -s "$winners" ]; then
  echo "no winners from TuneFleet: bench.py's STAND_IN is timed in their place"
  winners=/tmp/no-winners.txt
  : >"$winners"
fi
timeout 240 python3 "$here/bench.py" "$lib" bench $winners 2>&1 | tee "$out/bench.log"
