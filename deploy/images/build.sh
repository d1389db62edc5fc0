#!/usr/bin/env bash
# Builds the images with podman (or buildah, ENGINE=buildah) from the
# repository: localhost/tunefleet-build, then tunefleet-coordinator,
# tunefleet-worker (CPU and NVIDIA) and tunefleet-worker-amd, tagged TAG
# (default: the commit). Needs the debian:bookworm-slim base image.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
engine="${ENGINE:-podman}"
tag="${TAG:-$(git -C "$root" rev-parse --short HEAD)}"
build() { "$engine" build --layers -f "$root/deploy/images/$1" "${@:2}" "$root"; }
build build.Containerfile -t localhost/tunefleet-build
build coordinator.Containerfile -t "tunefleet-coordinator:$tag"
build worker.Containerfile --target cpu -t "tunefleet-worker:$tag"
build worker.Containerfile --target amd -t "tunefleet-worker-amd:$tag"
