// ROCm SMI on a host without AMD GPUs (CI, the H200 host): found when
// Debian's librocm-smi64-1 is installed (scripts/install-deps.sh), its
// rsmi_init fails or it lists no GPU, and the runner carries on without a
// clock or temperature, as the NVIDIA one does without NVML.
#include "vendors/amd/amd_sensors.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

namespace tf::amd {
namespace {

TEST(AmdSensorsTest, WithoutAnAmdGpuThereIsNoSensorAndNoFailure) {
  void* installed = dlopen("librocm_smi64.so.1", RTLD_NOW | RTLD_LOCAL);
  const Status library = AmdSensors::Library();
  if (installed == nullptr) {
    EXPECT_EQ(library.code(), Code::kUnavailable) << library.ToString();
    EXPECT_NE(library.message().find("librocm_smi64.so.1"), std::string::npos);
  } else {
    dlclose(installed);
    EXPECT_NE(library.code(), Code::kUnavailable)
        << "ROCm SMI is installed but was not loaded: " << library.ToString();
  }
  EXPECT_EQ(AmdSensors::Open("0000:c1:00.0"), nullptr);
  EXPECT_EQ(AmdSensors::Open("not a bus id"), nullptr);
}

TEST(AmdSensorsTest, PciBusIdsBecomeRocmSmiIdentifiers) {
  EXPECT_EQ(PciBdfid("0000:c1:00.0"), uint64_t{0xc100});
  EXPECT_EQ(PciBdfid("0001:03:1F.7"), (uint64_t{1} << 32) | (0x03 << 8) | (0x1f << 3) | 7);
  EXPECT_EQ(PciBdfid("0000:c1:00"), std::nullopt);
  EXPECT_EQ(PciBdfid("0000:c1:20.0"), std::nullopt) << "a device number has 5 bits";
  EXPECT_EQ(PciBdfid("0000:c1:00.0 "), std::nullopt);
}

}  // namespace
}  // namespace tf::amd
