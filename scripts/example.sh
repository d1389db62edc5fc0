#!/usr/bin/env bash
# The main job on one machine: installs and builds, starts a coordinator and a
# CPU worker on 127.0.0.1 with the embedded database, tunes the example GEMM,
# prints the best configuration per problem, and stops what it started.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bash "$root/scripts/install-deps.sh"
# The programs the example runs, not the tests (scripts/test.sh builds those).
bash "$root/scripts/build.sh" tunefleet tunefleet-coordinator tunefleet-worker tunefleet-runner \
  tunefleet-sandbox
bin="${BUILD_DIR:-$root/build}"
state="${TUNEFLEET_STATE:-$root/.tunefleet}"
mkdir -p "$state"
rm -f "$state/port"

# The coordinator writes its admin token to $state/admin.token (mode 0600) on
# first start; the worker and the submitter below get tokens of their own.
"$bin/bin/tunefleet-coordinator" --listen 127.0.0.1:0 --db "$state/tunefleet.db" \
  --artifacts "$state/artifacts" --port-file "$state/port" --plaintext \
  --admin-token-file "$state/admin.token" >"$state/coordinator.log" 2>&1 &
coordinator=$!
worker=""
cleanup() {
  [ -n "$worker" ] && kill "$worker" 2>/dev/null || true
  kill "$coordinator" 2>/dev/null || true
  wait 2>/dev/null || true
}
trap cleanup EXIT
for _ in $(seq 100); do [ -s "$state/port" ] && break; sleep 0.1; done
[ -s "$state/port" ] || { cat "$state/coordinator.log"; exit 1; }
export TUNEFLEET_COORDINATOR="127.0.0.1:$(cat "$state/port")"
echo "coordinator at $TUNEFLEET_COORDINATOR (logs in $state)"

tunefleet() { "$bin/bin/tunefleet" "$@"; }
(
  umask 077
  tunefleet --token-file "$state/admin.token" token create --role worker --name example-worker \
    >"$state/worker.token"
  # The submitter token of an earlier run, while the database still knows it,
  # rather than one more token of the same name each run.
  if ! tunefleet --token-file "$state/submitter.token" jobs --limit 1 >/dev/null 2>&1; then
    tunefleet --token-file "$state/admin.token" token create --role submitter \
      --name example-submitter >"$state/submitter.token"
  fi
)
export TUNEFLEET_TOKEN_FILE="$state/submitter.token"

devices="cpu:$(( $(nproc) > 1 ? 2 : 1 ))"
"$bin/bin/tunefleet-worker" --coordinator "$TUNEFLEET_COORDINATOR" --devices "$devices" \
  --cache "$state/worker-cache" --token-file "$state/worker.token" >"$state/worker.log" 2>&1 &
worker=$!

tunefleet submit "$root/examples/cpu/gemm/gemm.yaml" --wait
tunefleet workers
