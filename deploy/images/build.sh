#!/usr/bin/env bash
# Builds the images with podman from the repository: localhost/tunefleet-build,
# then tunefleet-coordinator, tunefleet-worker (CPU and NVIDIA) and
# tunefleet-worker-<name> for each vendor folder with a runtime-packages file
# (amd: tunefleet-worker-amd), tagged TAG (default: the commit).
#   DEBIAN     the Debian 12 base image (default docker.io/library/debian:bookworm-slim)
#   ISOLATION  podman's --isolation for RUN steps (default oci; chroot where
#              containers cannot run, as on the development machines)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
tag="${TAG:-$(git -C "$root" rev-parse --short HEAD)}"
build() {
  podman build --layers --isolation "${ISOLATION:-oci}" \
    ${DEBIAN:+--build-arg "DEBIAN=$DEBIAN"} -f "$root/deploy/images/$1" "${@:2}" "$root"
}
build build.Containerfile -t localhost/tunefleet-build
build coordinator.Containerfile -t "tunefleet-coordinator:$tag"
build worker.Containerfile --target cpu -t "tunefleet-worker:$tag"
for list in "$root"/vendors/*/runtime-packages; do
  name="$(basename "$(dirname "$list")")"
  build worker.Containerfile --target vendor --build-arg "PACKAGES=$(sed 's/#.*//' "$list" | xargs)" \
    -t "tunefleet-worker-$name:$tag"
done
