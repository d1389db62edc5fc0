#!/usr/bin/env bash
# On the GPU host: tunes each SPEC through TuneFleet itself (bench/gpu_tune.sh: a coordinator
# and a worker owning the host's GPUs) and copies each job's outcome to OUT_DIR as NAME.summary
# (gpu_tune.sh's report), NAME.best.json (`tunefleet submit --json`: each problem's winner)
# and NAME.results.txt. With SEARCH='{...}' the spec is tuned with that search section (YAML)
# instead of its default, e.g. SEARCH='{strategy: random, max_candidates: 64, seed: 1}' to fit
# a short GPU lease. A job that fails does not stop the others; the exit status says whether
# any failed.
#   [SEARCH=YAML] [TUNE_TIMEOUT_S=S] bench/tune_specs.sh CARRY_DIR OUT_DIR SPEC...
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
carry="$1" out="$2"
shift 2
mkdir -p "$out"
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
  else
    failed+=("$name")
  fi
  [ -z "${SEARCH:-}" ] || rm -f "$spec"
done
if ((${#failed[@]} > 0)); then
  echo "failed: ${failed[*]}"
  exit 1
fi
