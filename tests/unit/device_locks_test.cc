// DeviceLocks (worker/device_locks.h): what each kind of device locks, and
// the message a worker gets when another holds one.
#include "worker/device_locks.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <optional>

#include "common/files.h"
#include "tests/test_util.h"

namespace tf::worker {
namespace {

runner::Device MakeDevice(const std::string& vendor, int index) {
  runner::Device device;
  device.info.set_vendor(vendor);
  device.info.set_index(index);
  return device;
}

TEST(DeviceLocksTest, CoresAndGpusAreLockedOnceEachAndReplayDevicesNot) {
  testing::TempDir dir;
  runner::Device cpu = MakeDevice("cpu", 0);
  cpu.cpus = {2, 3};
  runner::Device gpu = MakeDevice("nvidia", 1);
  gpu.host_id = "0000:3B:00.0";
  runner::Device replay = MakeDevice("replay", 2);

  auto locks = DeviceLocks::Take({cpu, gpu, replay}, dir / "locks");
  ASSERT_TRUE(locks.ok()) << locks.status().ToString();
  EXPECT_EQ(locks->size(), 3u);
  // Each holds the holder's pid, for the next worker's message; the folder
  // is every user's, as /tmp.
  for (const char* name : {"core-2", "core-3", "gpu-0000:3b:00.0"}) {
    auto pid = ReadFile(dir / "locks/" + name);
    ASSERT_TRUE(pid.ok()) << name << ": " << pid.status().ToString();
    EXPECT_EQ(*pid, std::to_string(getpid()) + "\n") << name;
  }
  struct stat folder;
  ASSERT_EQ(stat((dir / "locks").c_str(), &folder), 0);
  EXPECT_EQ(folder.st_mode & 07777, 01777u);

  auto replay_only = DeviceLocks::Take({replay, replay}, dir / "locks");
  ASSERT_TRUE(replay_only.ok()) << replay_only.status().ToString();
  EXPECT_EQ(replay_only->size(), 0u);
}

TEST(DeviceLocksTest, AHeldGpuIsRefusedNamingItsHolderUntilReleased) {
  testing::TempDir dir;
  runner::Device gpu = MakeDevice("nvidia", 0);
  gpu.host_id = "0000:3b:00.0";
  runner::Device cpu = MakeDevice("cpu", 1);
  cpu.cpus = {0};
  std::optional<Result<DeviceLocks>> first = DeviceLocks::Take({gpu}, dir / "locks");
  ASSERT_TRUE(first->ok()) << first->status().ToString();

  // flock conflicts between two opens in one process as between processes.
  auto second = DeviceLocks::Take({cpu, gpu}, dir / "locks");
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), Code::kUnavailable);
  EXPECT_EQ(second.status().message(),
            "another tunefleet-worker (pid " + std::to_string(getpid()) +
                ") is using GPU 0000:3b:00.0 (nvidia device 0): give each worker its own GPUs "
                "with --devices nvidia:N, or stop that worker (lock file " +
                dir / "locks/gpu-0000:3b:00.0" + ")");
  {
    // Nothing is held after a refusal: the core is free.
    auto core = DeviceLocks::Take({cpu}, dir / "locks");
    EXPECT_TRUE(core.ok()) << core.status().ToString();
  }

  first.reset();
  auto third = DeviceLocks::Take({cpu, gpu}, dir / "locks");
  EXPECT_TRUE(third.ok()) << third.status().ToString();
}

}  // namespace
}  // namespace tf::worker
