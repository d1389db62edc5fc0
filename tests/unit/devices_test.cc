#include "worker/devices.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <set>

#include "common/subprocess.h"
#include "tests/test_util.h"
#include "vendors/device_kinds.h"
#include "vendors/vendor.h"

namespace tf::worker {
namespace {

// A device kind of this build that finds no device on this host ("" when
// every kind does): the GPU vendors' on a host without their GPUs.
std::string KindWithoutDevices() {
  for (const vendors::DeviceKind* kind : vendors::DeviceKindRows())
    if (kind->discover != nullptr && !DiscoverDevices(kind->name, "").ok()) return kind->name;
  return "";
}

int AllowedCores() {
  cpu_set_t set;
  sched_getaffinity(0, sizeof set, &set);
  return CPU_COUNT(&set);
}

TEST(DevicesTest, CpuDevicesGetDisjointEqualCoreSetsAndProperties) {
  if (AllowedCores() < 2) GTEST_SKIP() << "needs 2 cores";
  auto devices = DiscoverDevices("cpu:2", "bench");
  ASSERT_TRUE(devices.ok()) << devices.status().ToString();
  ASSERT_EQ(devices->size(), 2u);
  std::set<int> seen;
  for (int d = 0; d < 2; ++d) {
    const Device& device = (*devices)[d];
    const v1::DeviceInfo& info = device.info;
    EXPECT_EQ(info.index(), d);
    EXPECT_EQ(info.vendor(), "cpu");
    EXPECT_EQ(info.arch(), "host");
    EXPECT_FALSE(info.model().empty());
    const int cores = AllowedCores() / 2;
    EXPECT_EQ(static_cast<int>(device.cpus.size()), cores);
    EXPECT_EQ(info.compute_units(), cores);
    for (int cpu : device.cpus) EXPECT_TRUE(seen.insert(cpu).second) << "cpu " << cpu << " shared";
    EXPECT_TRUE(info.device_class().starts_with("cpu/"));
    EXPECT_TRUE(info.device_class().ends_with("/" + std::to_string(cores) + "c/bench"))
        << info.device_class();
    EXPECT_EQ(info.device_class().find(' '), std::string::npos);
    EXPECT_EQ(std::vector<std::string>(info.labels().begin(), info.labels().end()),
              std::vector<std::string>{"bench"});
    EXPECT_GT(info.memory_bytes(), 0);
    for (const char* name : {"cores", "l1d_bytes", "l2_bytes", "l3_bytes", "memory_bytes"}) {
      ASSERT_TRUE(info.properties().contains(name)) << name;
      EXPECT_GT(info.properties().at(name), 0) << name;
    }
    EXPECT_EQ(info.properties().at("cores"), cores);
  }
  EXPECT_EQ((*devices)[0].info.device_class(), (*devices)[1].info.device_class());
}

TEST(DevicesTest, BadDeviceFlagsNameTheProblem) {
  EXPECT_NE(DiscoverDevices("gpu:1", "").status().message().find("unknown device kind 'gpu'"),
            std::string::npos);
  EXPECT_NE(DiscoverDevices("cpu:0", "").status().message().find("must be a positive integer"),
            std::string::npos);
  EXPECT_NE(DiscoverDevices("cpu:100000", "").status().message().find("cannot make 100000 CPU"),
            std::string::npos);
  EXPECT_NE(DiscoverDevices("cpu,cpu", "").status().message().find("given twice"),
            std::string::npos);
  auto one = DiscoverDevices("cpu", "");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->size(), 1u);
  EXPECT_TRUE(one->front().info.labels().empty());
}

// A worker offering nothing asked the coordinator to register it forever.
TEST(DevicesTest, AFlagThatFindsNoDeviceFailsAndAKindWithoutOneIsSkipped) {
  const std::string absent = KindWithoutDevices();
  if (absent.empty()) GTEST_SKIP() << "every device kind of this build finds a device here";
  auto none = DiscoverDevices(absent, "");
  EXPECT_EQ(none.status().code(), Code::kUnavailable);
  EXPECT_NE(none.status().message().find("--devices '" + absent + "' finds no device on this host"),
            std::string::npos)
      << none.status().message();
  auto cpu = DiscoverDevices(absent + ",cpu:1", "");
  ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
  ASSERT_EQ(cpu->size(), 1u);
  EXPECT_EQ(cpu->front().info.vendor(), "cpu");
}

// A GPU worker started before its driver is up exits 75, which systemd's
// Restart=on-failure and Kubernetes restart; a bad flag exits 2, which the
// unit does not restart (deploy/systemd/tunefleet-worker@.service).
TEST(DevicesTest, TheWorkerExits75WhileNoDeviceIsThereAnd2ForABadFlag) {
  const std::string absent_kind = KindWithoutDevices();
  if (absent_kind.empty()) GTEST_SKIP() << "every device kind of this build finds a device here";
  testing::TempDir dir;
  auto worker = [&](const std::string& devices) {
    auto ran = RunProcess({testing::BinaryPath("bin/tunefleet-worker"), "--coordinator",
                           "127.0.0.1:1", "--cache", dir / "cache", "--devices", devices},
                          testing::WithTimeout(60));
    EXPECT_TRUE(ran.ok()) << ran.status().ToString();
    return ran.ok() ? *ran : ProcessResult{};
  };
  auto absent = worker(absent_kind);
  EXPECT_EQ(absent.exit_code, 75) << absent.output;
  EXPECT_NE(absent.output.find("finds no device on this host"), std::string::npos) << absent.output;
  auto bad = worker("cpu:0");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
}

TEST(DevicesTest, ReplayDevicesTakeAFileEachAndRepeat) {
  const std::string dir = TF_SOURCE_DIR "/tests/data/spaces/convolution/";
  auto devices = DiscoverDevices(
      "cpu:1,replay:" + dir + "A100_T4.json.gz,replay:" + dir + "A100_kerneltuner_cache.json.gz",
      "", 0.25);
  ASSERT_TRUE(devices.ok()) << devices.status().ToString();
  ASSERT_EQ(devices->size(), 3u);
  for (int d = 0; d < 3; ++d) EXPECT_EQ((*devices)[d].info.index(), d);
  EXPECT_EQ((*devices)[1].info.vendor(), "replay");
  EXPECT_EQ((*devices)[2].info.vendor(), "replay");
  EXPECT_EQ((*devices)[1].files.size(), 1u);
  EXPECT_NE((*devices)[1].files[0], (*devices)[2].files[0]);
  EXPECT_EQ((*devices)[2].info.properties().at("replay_speed_permille"), 250);
  EXPECT_NE(DiscoverDevices("replay:", "").status().message().find("needs a file: replay:FILE"),
            std::string::npos);
  EXPECT_NE(DiscoverDevices("replay:/nonexistent.json", "")
                .status()
                .message()
                .find("replay:/nonexistent.json"),
            std::string::npos);
}

}  // namespace
}  // namespace tf::worker
