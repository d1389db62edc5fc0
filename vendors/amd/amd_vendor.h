// AMD GPUs run hip kernels, which clang-19 builds for them: what the vendor
// tables know of vendors/amd/ (vendors/vendor.h says what each part is).
#pragma once

#include "vendors/vendor.h"

namespace tf::amd {

inline constexpr vendors::Language kLanguages[] = {{"hip", ""}};
inline constexpr vendors::Names kNames = {"amd", kLanguages};

extern const vendors::CompileSide kCompileSide;  // hip_toolchain.cc
extern const vendors::DeviceKind kDeviceKind;    // amd_devices.cc

}  // namespace tf::amd
