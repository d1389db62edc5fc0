// On a host without AMD GPUs (CI, the H200 host), as Debian's libamdhip64
// reports them: hipGetDeviceCount returns hipErrorNoDevice. The worker's
// discovery then finds none and carries on; naming a GPU is an error that
// says why.
#include "vendors/amd/amd_devices.h"

#include <gtest/gtest.h>

#include "vendors/device_kinds.h"

namespace tf::amd {
namespace {

TEST(AmdDevicesTest, AHostWithoutAmdGpusReportsNoneAndCarriesOn) {
  auto kind = vendors::FindDeviceKind("amd");
  ASSERT_TRUE(kind.ok()) << kind.status().ToString();
  auto devices = (*kind)->discover({}, 3, "");
  ASSERT_TRUE(devices.ok()) << devices.status().ToString();
  EXPECT_TRUE(devices->empty());
  // The host's other devices are still there.
  auto cpu = vendors::FindDeviceKind("cpu");
  ASSERT_TRUE(cpu.ok());
  auto cpus = (*cpu)->discover({1}, 0, "");
  ASSERT_TRUE(cpus.ok()) << cpus.status().ToString();
  EXPECT_EQ(cpus->size(), 1u);
}

TEST(AmdDevicesTest, NamingAGpuThatIsNotThereSaysWhy) {
  auto devices = DiscoverAmdDevices({0}, 0, "");
  EXPECT_EQ(devices.status().code(), Code::kFailedPrecondition);
  EXPECT_NE(devices.status().message().find("AMD GPU 0"), std::string::npos)
      << devices.status().message();
}

TEST(AmdDevicesTest, TheRunnerMayUseTheKernelDriverAndRenderNodes) {
  sandbox::Policy policy;
  ConfineAmdRunner(1 << 30, policy);
  auto has = [](const std::vector<std::string>& paths, const std::string& path) {
    return std::find(paths.begin(), paths.end(), path) != paths.end();
  };
  EXPECT_TRUE(has(policy.write_paths, "/dev/kfd"));
  EXPECT_TRUE(has(policy.write_paths, "/dev/dri"));
  EXPECT_TRUE(has(policy.read_paths, "/sys"));
  EXPECT_EQ(policy.max_data_bytes, uint64_t{1} << 30);
}

}  // namespace
}  // namespace tf::amd
