// On a host without AMD GPUs (CI, the H200 host), as Debian's libamdhip64
// reports them: hipGetDeviceCount returns hipErrorNoDevice. The worker's
// discovery then finds none and carries on; naming a GPU is an error that
// says why.
#include "vendors/amd/amd_devices.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "common/files.h"
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
  EXPECT_EQ(devices.status().code(), Code::kUnavailable);
  EXPECT_NE(devices.status().message().find("AMD GPU 0"), std::string::npos)
      << devices.status().message();
}

bool Has(const std::vector<std::string>& paths, const std::string& path) {
  return std::find(paths.begin(), paths.end(), path) != paths.end();
}

TEST(AmdDevicesTest, TheRunnerMayUseTheDeviceNodesThatExist) {
  sandbox::Policy policy;
  ConfineAmdRunner(1 << 30, policy);
  EXPECT_EQ(Has(policy.write_paths, "/dev/kfd"), std::filesystem::exists("/dev/kfd"));
  EXPECT_EQ(Has(policy.write_paths, "/dev/dri"), std::filesystem::exists("/dev/dri"));
  EXPECT_TRUE(Has(policy.write_paths, "/dev/shm")) << "ROCm SMI's mutexes";
  EXPECT_TRUE(Has(policy.read_paths, "/sys"));
  EXPECT_EQ(policy.max_data_bytes, uint64_t{1} << 30);
}

// A fake /dev of an AMD host: kfd and a render node of the render group,
// a card node of the video group, as amdgpu's udev rules make them.
TEST(AmdDevicesTest, DeviceNodesAndTheirGroupsAreAllowedWhenPresent) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give the fake nodes their groups";
  auto dev = MakeTempDir("amd_dev-");
  ASSERT_TRUE(dev.ok());
  sandbox::Policy empty;
  AllowAmdDeviceNodes(*dev, empty);
  EXPECT_TRUE(empty.write_paths.empty());
  EXPECT_TRUE(empty.keep_groups.empty());

  ASSERT_TRUE(MakeDirs(*dev + "/dri").ok());
  const std::pair<const char*, gid_t> kNodes[] = {
      {"/kfd", 4242}, {"/dri/renderD128", 4242}, {"/dri/card0", 4244}};
  for (const auto& [node, group] : kNodes) {
    ASSERT_TRUE(WriteFileAtomic(*dev + node, "").ok());
    ASSERT_EQ(chown((*dev + node).c_str(), 0, group), 0);
  }
  sandbox::Policy policy;
  policy.keep_groups = {4242};
  AllowAmdDeviceNodes(*dev, policy);
  EXPECT_EQ(policy.write_paths, (std::vector<std::string>{*dev + "/kfd", *dev + "/dri"}));
  EXPECT_EQ(policy.keep_groups, (std::vector<uint32_t>{4242, 4244}));
  std::filesystem::remove_all(*dev);
}

}  // namespace
}  // namespace tf::amd
