#!/usr/bin/env bash
# Copies the built programs and the shared libraries they need (not libc,
# libstdc++, libcuda or NVML, which the GPU host has) into one folder, so that
# they run on a GPU host whose system lacks gRPC, protobuf, spdlog, ...
#   bench/carry.sh BUILD_DIR OUT_DIR PROGRAM...
set -euo pipefail
build="$1" out="$2"
shift 2
mkdir -p "$out/lib"
for program in "$@"; do
  cp "$build/$program" "$out/"
  ldd "$build/$program" | awk '/=> \// {print $3}' | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so*|libm.so*|libstdc++.so*|libgcc_s.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*|libcuda.so*|libnvidia-ml.so*|libnvrtc*) ;;
      *) cp -n "$lib" "$out/lib/" ;;
    esac
  done
done
strip "$out"/* "$out"/lib/* 2>/dev/null || true
du -sh "$out"
