#!/usr/bin/env bash
# On the GPU host: tunes the D = 128 attention specs through TuneFleet itself
# (bench/tune_specs.sh; by default every configuration, candidates estimated at over twice
# their problem's best not timed in full, SEARCH overrides) and writes each problem's winner
# to OUT_DIR/winners.txt as "DTYPE CAUSAL BxHxS KEY=VALUE,..." lines, which
# `bench.py LIB bench OUT_DIR/winners.txt` times against PyTorch.
# Each spec is tuned as several jobs of a few problems each: the runner keeps 4 GiB of
# prepared problems (inputs, outputs, reference outputs: 9 x B*H*S*D*2 bytes each, seen on the
# H200), the ten problems take 17 GiB, and in one job every lease prepared every problem
# again (the fp32 reference alone takes 4 s at S = 16384): 1.3 candidates/s (2026-12-04).
# PARAMS='NAME: [VALUES]; ...' narrows the specs' parameters to those values (to fit a short
# lease), e.g. PARAMS='CONSUMERS: [2]; OVERLAP: [2]'.
#   [SEARCH=YAML] [PARAMS=...] [TUNE_TOTAL_S=S] bench/attention/tune.sh CARRY_DIR OUT_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
carry="$1" out="$2"
specs=()
for dtype in bf16 f16; do
  spec="$here/../../examples/cuda/attention/attention_${dtype}_d128.yaml"
  # Siblings (.part-N-NAME.yaml), so that their source paths still resolve.
  mapfile -t -O ${#specs[@]} specs < <(python3 - "$spec" <<'PY'
import os, re, sys
spec = sys.argv[1]
text = open(spec).read()
for narrowed in filter(None, (x.strip() for x in os.environ.get("PARAMS", "").split(";"))):
    name = narrowed.split(":")[0]
    text, count = re.subn(rf"^  {name}: \[[^]]*\]", "  " + narrowed, text, flags=re.M)
    assert count == 1, f"PARAMS: no parameter {name} in {spec}"
problems = re.findall(r"  - \{B: .*\}\n", text)
parts, size = [[]], 0
for p in problems:
    b, h, s, d = (int(re.search(rf"{k}: (\d+)", p).group(1)) for k in "BHSD")
    bytes_ = 9 * b * h * s * d * 2
    if parts[-1] and size + bytes_ > 3.5 * 2**30:
        parts.append([])
        size = 0
    parts[-1].append(p)
    size += bytes_
for i, part in enumerate(parts):
    copy = os.path.join(os.path.dirname(spec), f".part-{i}-{os.path.basename(spec)}")
    keep = lambda m: m.group(0) if m.group(0) in part else ""
    open(copy, "w").write(re.sub(r"  - \{B: .*\}\n", keep, text))
    print(copy)
PY
  )
done
trap 'rm -f "${specs[@]}"' EXIT
# The winners of the jobs that finished are written even when others failed or ran out of
# TUNE_TOTAL_S.
SEARCH=${SEARCH:-"{strategy: exhaustive, early_stop: 2.0}"} timeout "${TUNE_TOTAL_S:-3600}" \
  bash "$here/../tune_specs.sh" "$carry" "$out" "${specs[@]}" || echo "not every job finished"
python3 - "$out" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
lines = []
for path in sorted(glob.glob(f"{out}/*.best.json") + glob.glob(f"{out}/.*.best.json")):
    dtype = "bf16" if "bf16" in os.path.basename(path) else "f16"
    for entry in json.load(open(path))["best"]:
        p, config = entry["problem"], entry["config"]
        settings = ",".join(f"{k}={v}" for k, v in config.items())
        lines.append(f"{dtype} {p['CAUSAL']} {p['B']}x{p['H']}x{p['S']} {settings}")
        print(f"{lines[-1]}: {entry['median_ns'] / 1e6:.3f} ms, "
              f"{entry['gflops'] / 1e3:.0f} TFLOP/s")
open(f"{out}/winners.txt", "w").write("\n".join(lines) + "\n")
PY
