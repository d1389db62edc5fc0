// Replay devices answer replay kernels from recordings, and nothing is built:
// what the vendor tables know of vendors/replay/ (vendors/vendor.h says what
// each part is).
#pragma once

#include "vendors/vendor.h"

namespace tf::replay {

inline constexpr vendors::Language kLanguages[] = {{"replay", ""}};
inline constexpr vendors::Names kNames = {"replay", kLanguages};

extern const vendors::CompileSide kCompileSide;  // replay_toolchain.cc
extern const vendors::DeviceKind kDeviceKind;    // replay_devices.cc

}  // namespace tf::replay
