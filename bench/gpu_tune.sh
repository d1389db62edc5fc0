#!/usr/bin/env bash
# On a GPU host: tunes a CUDA example end to end through a coordinator and a
# worker owning the host's NVIDIA GPUs, and reports candidates per second and
# the share of wall time the GPU spent busy (nvidia-smi utilization sampled
# every 100 ms over the job). Programs come from a folder made by carry.sh;
# RUNNER names another tunefleet-runner and COORDINATOR another
# tunefleet-coordinator (to compare two builds in one run),
# WORKER_FLAGS adds worker flags (e.g. --no-runner-sandbox), COORDINATOR_FLAGS the
# coordinator's (e.g. --build-jobs 16, as on a 16-core GPU host), DEVICES the worker's
# devices instead of nvidia (replay:FILE tries the script without a GPU). COORDINATOR_ALONE=1
# runs the coordinator from a folder of its own, without tunefleet-nvrtc beside it
# (as on a host without the CUDA toolkit), so that the worker compiles the job.
# Tokens as an operator would use them: the coordinator's admin token makes a
# worker and a submitter token.
#   [RUNNER=PATH] [COORDINATOR=PATH] [WORKER_FLAGS=...] [COORDINATOR_FLAGS=...] [DEVICES=...] [COORDINATOR_ALONE=1] bench/gpu_tune.sh CARRY_DIR SPEC [STATE_DIR]
set -euo pipefail
carry="$(cd "$1" && pwd)" spec="$2" state="${3:-/tmp/tunefleet-gpu}"
export LD_LIBRARY_PATH="$carry/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
rm -rf "$state" && mkdir -p "$state"
coordinator_bin="${COORDINATOR:-$carry/tunefleet-coordinator}"
if [ -n "${COORDINATOR_ALONE:-}" ]; then
  mkdir -p "$state/coordinator-alone"
  cp "$coordinator_bin" "$state/coordinator-alone/"
  coordinator_bin="$state/coordinator-alone/tunefleet-coordinator"
fi
"$coordinator_bin" --listen 127.0.0.1:0 --db "$state/t.db" --artifacts "$state/art" \
  --port-file "$state/port" --plaintext --admin-token-file "$state/admin.token" \
  ${COORDINATOR_FLAGS:-} >"$state/coordinator.log" 2>&1 &
coordinator=$! worker="" smi=""
trap 'kill $coordinator $worker $smi 2>/dev/null; wait 2>/dev/null' EXIT
for _ in $(seq 100); do [ -s "$state/port" ] && break; sleep 0.1; done
export TUNEFLEET_COORDINATOR="127.0.0.1:$(cat "$state/port")"
(
  umask 077
  for role in worker submitter; do
    "$carry/tunefleet" --token-file "$state/admin.token" token create --role $role \
      --name "gpu-tune-$role" >"$state/$role.token"
  done
)
export TUNEFLEET_TOKEN_FILE="$state/submitter.token"
"$carry/tunefleet-worker" --coordinator "$TUNEFLEET_COORDINATOR" --devices "${DEVICES:-nvidia}" --cache "$state/cache" \
  --token-file "$state/worker.token" --runner "${RUNNER:-$carry/tunefleet-runner}" ${WORKER_FLAGS:-} \
  >"$state/worker.log" 2>&1 &
worker=$!
nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits -lms 100 >"$state/util.csv" &
smi=$!
start=$(date +%s.%N)
if ! timeout "${TUNE_TIMEOUT_S:-300}" "$carry/tunefleet" submit "$spec" --wait --json >"$state/best.json"; then
  echo "the job did not finish; logs:"
  tail -n 20 "$state/coordinator.log" "$state/worker.log"
  exit 1
fi
end=$(date +%s.%N)
kill $smi 2>/dev/null || true  # gone at once where there is no nvidia-smi
job=$("$carry/tunefleet" jobs --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["job_id"])')
"$carry/tunefleet" status "$job" --json >"$state/status.json"
"$carry/tunefleet" results "$job" >"$state/results.txt"
python3 - "$state" "$start" "$end" <<'PY'
import json, sys
state, start, end = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
status = json.load(open(f"{state}/status.json"))
util = [int(x) for x in open(f"{state}/util.csv").read().split() if x.strip().isdigit()]
wall = end - start
total = status["candidates_total"]
busy = sum(u > 0 for u in util) / max(len(util), 1)
print(f"job {status.get('job_id')} {status['state']}: {total} candidates "
      f"({status['candidates_failed']} failed or pruned) in {wall:.1f} s = {total / wall:.2f} candidates/s")
print(f"GPU busy (utilization > 0) in {100 * busy:.0f}% of {len(util)} samples; "
      f"mean utilization {sum(util) / max(len(util), 1):.0f}%")
PY
grep -E "built [0-9]+ configurations|its workers compile it" "$state/coordinator.log" || true
grep -cE "bundle [0-9a-f]+ for .*: compiled" "$state/worker.log" | sed 's/^/bundles compiled on the worker: /' || true
grep -cE "bundle [0-9a-f]+ for .*: already built" "$state/worker.log" | sed 's/^/bundles found built on the worker: /' || true
head -12 "$state/results.txt"
