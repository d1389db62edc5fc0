// The host's cores run cpp kernels, which g++ builds for them: what the vendor
// tables know of vendors/cpu/ (vendors/vendor.h says what each part is).
#pragma once

#include "vendors/vendor.h"

namespace tf::cpu {

inline constexpr vendors::Language kLanguages[] = {{"cpp", "host"}};
inline constexpr vendors::Names kNames = {"cpu", kLanguages};

extern const vendors::CompileSide kCompileSide;  // host_toolchain.cc
extern const vendors::DeviceKind kDeviceKind;    // cpu_devices.cc

}  // namespace tf::cpu
