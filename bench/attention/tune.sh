#!/usr/bin/env bash
# On the GPU host: tunes the D = 128 attention specs through TuneFleet itself
# (bench/tune_specs.sh; by default every configuration, candidates estimated at over twice
# their problem's best not timed in full, SEARCH overrides) and writes each problem's winner
# to OUT_DIR/winners.txt as "DTYPE CAUSAL BxHxS KEY=VALUE,..." lines, which
# `bench.py LIB bench OUT_DIR/winners.txt` times against PyTorch. One job per spec: the
# runner keeps half of the GPU's memory of prepared problems, and the ten problems take
# 17 GiB (inputs, outputs and reference outputs: 9 x B*H*S*D*2 bytes each).
# PARAMS='NAME: [VALUES]; ...' narrows the specs' parameters to those values (to fit a short
# lease), e.g. PARAMS='CONSUMERS: [2]; OVERLAP: [2]'.
#   [SEARCH=YAML] [PARAMS=...] [TUNE_TOTAL_S=S] bench/attention/tune.sh CARRY_DIR OUT_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
carry="$1" out="$2"
specs=()
for dtype in bf16 f16; do
  spec="$here/../../examples/cuda/attention/attention_${dtype}_d128.yaml"
  # A sibling (.narrowed-NAME.yaml), so that its source paths still resolve.
  specs+=("$(python3 - "$spec" <<'PY'
import os, re, sys
spec = sys.argv[1]
text = open(spec).read()
for narrowed in filter(None, (x.strip() for x in os.environ.get("PARAMS", "").split(";"))):
    name = narrowed.split(":")[0]
    text, count = re.subn(rf"^  {name}: \[[^]]*\]", "  " + narrowed, text, flags=re.M)
    assert count == 1, f"PARAMS: no parameter {name} in {spec}"
copy = os.path.join(os.path.dirname(spec), f".narrowed-{os.path.basename(spec)}")
open(copy, "w").write(text)
print(copy)
PY
  )")
done
trap 'rm -f "${specs[@]}"' EXIT
# The winners of the jobs that finished are written even when others failed or ran out of
# TUNE_TOTAL_S.
SEARCH=${SEARCH:-"{strategy: exhaustive, early_stop: 2.0}"} WINNER_PROBLEM='{CAUSAL} {B}x{H}x{S}' \
  timeout "${TUNE_TOTAL_S:-3600}" bash "$here/../tune_specs.sh" "$carry" "$out" "${specs[@]}" ||
  echo "not every job finished"
