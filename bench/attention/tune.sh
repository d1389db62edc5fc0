#!/usr/bin/env bash
# On the GPU host: tunes the D = 128 attention specs through TuneFleet itself
# (bench/tune_specs.sh; by default every configuration, candidates estimated at over twice
# their problem's best not timed in full, SEARCH overrides) and writes each problem's winner
# to OUT_DIR/winners.txt as "DTYPE CAUSAL BxHxS KEY=VALUE,..." lines, which
# `bench.py LIB bench OUT_DIR/winners.txt` times against PyTorch.
#   [SEARCH=YAML] bench/attention/tune.sh CARRY_DIR OUT_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
carry="$1" out="$2"
SEARCH=${SEARCH:-"{strategy: exhaustive, early_stop: 2.0}"} bash "$here/../tune_specs.sh" \
  "$carry" "$out" "$here/../../examples/cuda/attention/attention_f16_d128.yaml" \
  "$here/../../examples/cuda/attention/attention_bf16_d128.yaml"
python3 - "$out" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
lines = []
for path in sorted(glob.glob(f"{out}/*.best.json")):
    dtype = "bf16" if "bf16" in os.path.basename(path) else "f16"
    for entry in json.load(open(path))["best"]:
        p, config = entry["problem"], entry["config"]
        settings = ",".join(f"{k}={v}" for k, v in config.items())
        lines.append(f"{dtype} {p['CAUSAL']} {p['B']}x{p['H']}x{p['S']} {settings}")
        print(f"{lines[-1]}: {entry['median_ns'] / 1e6:.3f} ms, "
              f"{entry['gflops'] / 1e3:.0f} TFLOP/s")
open(f"{out}/winners.txt", "w").write("\n".join(lines) + "\n")
PY
