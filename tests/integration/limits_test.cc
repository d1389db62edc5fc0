// Limits a client meets early and clearly: request size, jobs in flight, and
// buffers against the memory of the device a job is bound to. Real
// coordinator and worker processes over 127.0.0.1, the real CLI.
#include <gtest/gtest.h>

#include "common/files.h"
#include "tests/test_util.h"

namespace tf::testing {
namespace {

constexpr const char* kSpec = R"(kernel: copy
language: cpp
source: copy.cpp
entry: "copy<{U}>"
params:
  U: [1, 2]
problems:
  - {N: COUNT}
scalars: [N]
buffers:
  X: {dtype: f32, count: "N"}
  Y: {dtype: f32, count: "N", output: true}
verify: {reference: copy_reference}
target: {vendor: cpu, arch: host}
)";

constexpr const char* kSource = R"(#include <cstdint>
template <int U> void copy(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i];
}
void copy_reference(const float* x, float* y, int64_t n) { copy<1>(x, y, n); }
)";

class LimitsTest : public ::testing::Test {
 protected:
  // A spec with N elements per buffer and, optionally, padding in its source.
  std::string WriteSpec(const std::string& name, int64_t n, size_t source_padding = 0) {
    std::string spec = kSpec;
    spec.replace(spec.find("COUNT"), 5, std::to_string(n));
    const std::string folder = dir_ / name;
    EXPECT_TRUE(MakeDirs(folder).ok());
    EXPECT_TRUE(WriteFileAtomic(folder + "/copy.yaml", spec).ok());
    EXPECT_TRUE(
        WriteFileAtomic(folder + "/copy.cpp", kSource + std::string(source_padding, '\n')).ok());
    return folder + "/copy.yaml";
  }

  TempDir dir_;
};

TEST_F(LimitsTest, RequestsAboveTheMessageLimitAreRefusedWithTheSizes) {
  CoordinatorProcess coordinator(dir_.path(), {"--max-message-mb", "1"});
  coordinator.Start();
  auto refused = RunCli(coordinator.address(), {"submit", WriteSpec("big", 64, 2 << 20)});
  EXPECT_NE(refused.exit_code, 0);
  // gRPC's own words, with both sizes: "Received message larger than max
  // (2097635 vs. 1048576)".
  EXPECT_NE(refused.output.find("larger than max ("), std::string::npos) << refused.output;
  EXPECT_NE(refused.output.find(" vs. 1048576)"), std::string::npos) << refused.output;
  auto accepted = RunCli(coordinator.address(), {"submit", WriteSpec("small", 64)});
  EXPECT_EQ(accepted.exit_code, 0) << accepted.output;
}

TEST_F(LimitsTest, JobsInFlightAreCappedUntilOneEnds) {
  CoordinatorProcess coordinator(dir_.path(), {"--max-jobs-in-flight", "1"});
  coordinator.Start();
  const std::string spec = WriteSpec("copy", 64);
  auto first = RunCli(coordinator.address(), {"submit", spec, "--json"});
  ASSERT_EQ(first.exit_code, 0) << first.output;
  auto second = RunCli(coordinator.address(), {"submit", spec});
  EXPECT_NE(second.exit_code, 0);
  EXPECT_NE(second.output.find("1 jobs are queued or running"), std::string::npos) << second.output;
  EXPECT_NE(second.output.find("--max-jobs-in-flight 1"), std::string::npos) << second.output;
  auto cancelled = RunCli(coordinator.address(), {"cancel", "1"});
  ASSERT_EQ(cancelled.exit_code, 0) << cancelled.output;
  auto third = RunCli(coordinator.address(), {"submit", spec});
  EXPECT_EQ(third.exit_code, 0) << third.output;
}

// The worker's CPU runners are limited to 256 MiB, so its devices report
// that much memory; a job whose buffers need more fails at binding, before
// anything is built, and says how much it needed.
TEST_F(LimitsTest, BuffersBeyondTheDeviceMemoryFailTheJobBeforeBuilding) {
  CoordinatorProcess coordinator(dir_.path());
  coordinator.Start();
  auto worker =
      StartWorker(coordinator.address(), dir_.path(), "w", "cpu:1", {"--runner-memory-mb", "256"});
  auto submitted = RunCli(coordinator.address(),
                          {"submit", WriteSpec("huge", int64_t{32} << 20), "--wait"}, 120);
  EXPECT_NE(submitted.exit_code, 0) << submitted.output;
  EXPECT_NE(submitted.output.find("its buffers take 268435456 bytes"), std::string::npos)
      << submitted.output;
  EXPECT_NE(submitted.output.find("268435456 bytes of memory"), std::string::npos)
      << submitted.output;
  EXPECT_NE(submitted.output.find("failed: kernel copy on cpu/"), std::string::npos)
      << submitted.output;
}

// A device property no device of the class has (a typo) is found when the job
// is bound: the job fails on that class, naming the property and those known.
TEST_F(LimitsTest, AConstraintOnAPropertyTheDeviceLacksFailsTheJobOnItsClass) {
  CoordinatorProcess coordinator(dir_.path());
  coordinator.Start();
  auto worker = StartWorker(coordinator.address(), dir_.path(), "w", "cpu:1");
  const std::string spec = WriteSpec("typo", 1024);
  auto text = ReadFile(spec);
  ASSERT_TRUE(text.ok());
  ASSERT_TRUE(WriteFileAtomic(spec, *text + "constraints: [\"U * 4 <= device.l1d_byte\"]\n").ok());
  auto submitted = RunCli(coordinator.address(), {"submit", spec, "--wait"}, 120);
  EXPECT_EQ(submitted.exit_code, 1) << submitted.output;
  EXPECT_NE(submitted.output.find("failed: kernel copy on cpu/"), std::string::npos)
      << submitted.output;
  EXPECT_NE(submitted.output.find("device property 'l1d_byte' is unknown"), std::string::npos)
      << submitted.output;
  EXPECT_NE(submitted.output.find("l1d_bytes"), std::string::npos) << submitted.output;
}

}  // namespace
}  // namespace tf::testing
