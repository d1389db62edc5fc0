// The code objects of compare_kernels.hip (tf_compare_<dtype>), one per gfx
// target of gfx_targets.h, made by clang-19 at build time
// (compare_kernels_main.cc) and loaded by the AMD backend to check outputs on
// the GPU. A code object runs on its own target only, so unlike CUDA's one
// PTX there is one per target.
#pragma once

#include <cstddef>
#include <span>

namespace tf::amd {

struct CompareCodeObject {
  const char* arch;  // "gfx942"
  const unsigned char* data;
  size_t size;
};

// Every target's, in GfxTargets() order.
std::span<const CompareCodeObject> CompareCodeObjects();

}  // namespace tf::amd
