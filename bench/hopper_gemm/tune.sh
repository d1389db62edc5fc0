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
  bash "$here/../tune_specs.sh" "$carry" "$out" "${specs[@]}"
python3 - "$out" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
lines = []
for path in sorted(glob.glob(f"{out}/*.best.json")):
    dtype = "bf16" if "bf16" in os.path.basename(path) else "f16"
    for entry in json.load(open(path))["best"]:
        p, config = entry["problem"], entry["config"]
        settings = ",".join(f"{k}={v}" for k, v in config.items())
        lines.append(f"{dtype} {p['M']}x{p['N']}x{p['K']} {settings}")
        print(f"{dtype} {p['M']}x{p['N']}x{p['K']}: {settings}, "
              f"{entry['median_ns'] / 1e3:.1f} us, {entry['gflops'] / 1e3:.0f} TFLOP/s")
open(f"{out}/winners.txt", "w").write("\n".join(lines) + "\n")
configs = sorted({line.split()[2] for line in lines})
open(f"{out}/winners_configs.txt", "w").write("\n".join(configs) + "\n")
PY
