#!/usr/bin/env bash
# On the GPU host: tunes each SPEC through TuneFleet itself (bench/gpu_tune.sh: a coordinator
# and a worker owning the host's GPUs) and copies each job's outcome to OUT_DIR as NAME.summary
# (gpu_tune.sh's report), NAME.best.json (`tunefleet submit --json`: each problem's winner)
# and NAME.results.txt. With SEARCH='{...}' the spec is tuned with that search section (YAML)
# instead of its default, e.g. SEARCH='{strategy: random, max_candidates: 64, seed: 1}' to fit
# a short GPU lease. A job that fails does not stop the others; the exit status says whether
# any failed. Every finished job's winners go to OUT_DIR/winners.txt, one line per
# problem, "DTYPE PROBLEM KEY=VALUE,...", PROBLEM written by WINNER_PROBLEM (a Python format
# string over the problem's variables, e.g. '{M}x{N}x{K}'); DTYPE is bf16 where the spec's
# name says so, else f16.
#   [SEARCH=YAML] [TUNE_TIMEOUT_S=S] [WINNER_PROBLEM=FORMAT] bench/tune_specs.sh CARRY_DIR OUT_DIR SPEC...
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
carry="$1" out="$2"
shift 2
mkdir -p "$out"
# Rewrites OUT_DIR/winners.txt from every finished job; prints job NAME's lines.
write_winners() {
  WINNER_PROBLEM=${WINNER_PROBLEM:-} python3 - "$out" "$1" <<'PY'
import glob, json, os, sys
out, latest = sys.argv[1], sys.argv[2]
lines = []
for path in sorted(glob.glob(f"{out}/*.best.json") + glob.glob(f"{out}/.*.best.json")):
    dtype = "bf16" if "bf16" in os.path.basename(path) else "f16"
    for entry in json.load(open(path))["best"]:
        problem, config = entry["problem"], entry["config"]
        name = os.environ["WINNER_PROBLEM"].format(**problem) if os.environ["WINNER_PROBLEM"] else \
            ",".join(f"{k}={v}" for k, v in problem.items())
        lines.append(f"{dtype} {name} " + ",".join(f"{k}={v}" for k, v in config.items()))
        if os.path.basename(path) == f"{latest}.best.json":
            print(f"{lines[-1]}: {entry['median_ns'] / 1e3:.1f} us, {entry['gflops'] / 1e3:.0f} TFLOP/s")
open(f"{out}/winners.txt", "w").write("\n".join(lines) + "\n")
PY
}
failed=()
for spec in "$@"; do
  name=$(basename "$spec" .yaml)
  state="/tmp/tunefleet-$name"
  echo "== $name"
  if [ -n "${SEARCH:-}" ]; then  # a sibling copy, so that its source path still resolves
    searched="$(dirname "$spec")/.searched-$name.yaml"
    { cat "$spec"; echo "search: $SEARCH"; } >"$searched"
    spec="$searched"
  fi
  if bash "$here/gpu_tune.sh" "$carry" "$spec" "$state" | tee "$out/$name.summary"; then
    cp "$state/best.json" "$out/$name.best.json"
    cp "$state/results.txt" "$out/$name.results.txt"
    write_winners "$name"  # after every job: a caller's timeout keeps the finished jobs' winners
  else
    failed+=("$name")
  fi
  [ -z "${SEARCH:-}" ] || rm -f "$spec"
done
if ((${#failed[@]} > 0)); then
  echo "failed: ${failed[*]}"
  exit 1
fi
