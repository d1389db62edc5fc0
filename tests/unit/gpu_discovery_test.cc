// Which GPUs a discovery describes, and what it says when they are not there
// (runner/gpu_discovery.h), with a stand-in for a driver.
#include "runner/gpu_discovery.h"

#include <gtest/gtest.h>

namespace tf::runner {
namespace {

// Describes every GPU by its ordinal and index; fails for `failing`.
DescribeGpu Describer(std::vector<std::pair<int, int>>& described, int failing = -1) {
  return [&described, failing](int ordinal, int index) -> Result<Device> {
    if (ordinal == failing) return Status::Internal("GPU " + std::to_string(ordinal) + " broke");
    described.emplace_back(ordinal, index);
    Device device;
    device.ordinal = ordinal;
    device.info.set_index(index);
    return device;
  };
}

TEST(GpuDiscoveryTest, NoOrdinalsMeansEveryGpuNumberedFromTheFirstIndex) {
  std::vector<std::pair<int, int>> described;
  auto devices = DescribeGpus("Acme", {}, 3, 5, Describer(described));
  ASSERT_TRUE(devices.ok()) << devices.status().ToString();
  ASSERT_EQ(devices->size(), 3u);
  EXPECT_EQ(described, (std::vector<std::pair<int, int>>{{0, 5}, {1, 6}, {2, 7}}));
  EXPECT_EQ((*devices)[2].ordinal, 2);
  EXPECT_EQ((*devices)[2].info.index(), 7);
}

TEST(GpuDiscoveryTest, NamedOrdinalsInTheirOrder) {
  std::vector<std::pair<int, int>> described;
  auto devices = DescribeGpus("Acme", {2, 0}, 3, 1, Describer(described));
  ASSERT_TRUE(devices.ok()) << devices.status().ToString();
  EXPECT_EQ(described, (std::vector<std::pair<int, int>>{{2, 1}, {0, 2}}));
}

TEST(GpuDiscoveryTest, AnOrdinalTheHostDoesNotHaveIsRefused) {
  std::vector<std::pair<int, int>> described;
  for (int ordinal : {3, -1}) {
    auto devices = DescribeGpus("Acme", {0, ordinal}, 3, 0, Describer(described));
    EXPECT_EQ(devices.status().code(), Code::kInvalidArgument);
    EXPECT_EQ(devices.status().message(), "--devices asks for Acme GPU " + std::to_string(ordinal) +
                                              " but this host has 3 (ordinals 0..2)");
  }
}

TEST(GpuDiscoveryTest, TheFirstDescribeErrorIsReturned) {
  std::vector<std::pair<int, int>> described;
  auto devices = DescribeGpus("Acme", {}, 3, 0, Describer(described, 1));
  EXPECT_EQ(devices.status().code(), Code::kInternal);
  EXPECT_EQ(devices.status().message(), "GPU 1 broke");
  EXPECT_EQ(described.size(), 1u);
}

TEST(GpuDiscoveryTest, NoGpusIsAnErrorOnlyWhenOneWasNamed) {
  auto none = NoGpus("Acme", {}, "the driver is not installed");
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_TRUE(none->empty());

  auto named = NoGpus("Acme", {4, 5}, "the driver is not installed");
  EXPECT_EQ(named.status().code(), Code::kUnavailable);
  EXPECT_EQ(named.status().message(),
            "--devices asks for Acme GPU 4 but the driver is not installed");

  auto built_without =
      NoGpus("Acme", {0}, "this worker was built without it", Code::kFailedPrecondition);
  EXPECT_EQ(built_without.status().code(), Code::kFailedPrecondition);
}

}  // namespace
}  // namespace tf::runner
