// NVIDIA GPUs run cuda kernels, which NVRTC builds for them: what the vendor
// tables know of vendors/nvidia/ (vendors/vendor.h says what each part is).
#pragma once

#include "vendors/vendor.h"

namespace tf::nvidia {

inline constexpr vendors::Language kLanguages[] = {{"cuda", ""}};
inline constexpr vendors::Names kNames = {"nvidia", kLanguages};

extern const vendors::CompileSide kCompileSide;  // nvrtc_toolchain.cc
extern const vendors::DeviceKind kDeviceKind;    // nvidia_devices.cc

}  // namespace tf::nvidia
