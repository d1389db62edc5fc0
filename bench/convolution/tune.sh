#!/usr/bin/env bash
# On a GPU host: imports Kernel Tuner's convolution (tests/data/spaces/convolution, its T1 file
# and kernel unchanged), checks its space (4,362 configurations), tunes it end to end through a
# coordinator and a worker (bench/gpu_tune.sh; every candidate checked against the kernel's own
# convolution_naive), and compares the best time with the A100's recorded optimum.
#   bench/convolution/tune.sh CARRY_DIR [STATE_DIR]
# CARRY_DIR: bench/carry.sh BUILD_DIR CARRY_DIR bin/tunefleet bin/tunefleet-coordinator
#            bin/tunefleet-worker bin/tunefleet-runner bin/tunefleet-nvrtc bin/tunefleet-sandbox
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
carry="$(cd "$1" && pwd)" state="${2:-/tmp/tunefleet-convolution}"
export LD_LIBRARY_PATH="$carry/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
spec_dir="$state-spec"
rm -rf "$spec_dir" && mkdir -p "$spec_dir"
"$carry/tunefleet" import kerneltuner "$root/tests/data/spaces/convolution/convolution_milo_T1.json" \
  --reference convolution_naive -o "$spec_dir/convolution.yaml"
"$carry/tunefleet" space "$spec_dir/convolution.yaml"
TUNE_TIMEOUT_S="${TUNE_TIMEOUT_S:-540}" "$root/bench/gpu_tune.sh" "$carry" "$spec_dir/convolution.yaml" "$state"
python3 - "$state/best.json" "$root/tests/data/spaces/convolution/A100_T4.json.gz" <<'PY'
import gzip, json, sys
best = json.load(open(sys.argv[1]))
entry = best["best"][0] if isinstance(best, dict) and "best" in best else best
a100 = json.load(gzip.open(sys.argv[2]))["results"]
ok = [r for r in a100 if r["invalidity"] == "correct"]
def ms(r):
    return next(m["value"] for m in r["measurements"] if m["name"] == r["objectives"][0])
top = min(ok, key=ms)
print("A100 recorded optimum: %.4f ms at %s" % (ms(top), top["configuration"]))
print("this GPU, best:", json.dumps(entry))
PY
