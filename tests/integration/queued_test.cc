// What a queued job tells its user: the device it waits for and the fleet
// that has none, through the real CLI, until a worker that has one comes.
// Real coordinator and CPU worker processes over 127.0.0.1.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/files.h"
#include "tests/test_util.h"

namespace tf::testing {
namespace {

using std::chrono::seconds;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kSpec = R"(kernel: copy
language: cpp
source: copy.cpp
entry: "copy<{U}>"
params:
  U: [1, 2]
problems:
  - {N: 1024}
scalars: [N]
buffers:
  X: {dtype: f32, count: "N"}
  Y: {dtype: f32, count: "N", output: true}
verify: {reference: copy_reference}
search: {finalists: 0}
)";

constexpr const char* kSource = R"(#include <cstdint>
template <int U> void copy(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i];
}
void copy_reference(const float* x, float* y, int64_t n) { copy<1>(x, y, n); }
)";

// The job's `tunefleet status --json`.
nlohmann::json StatusJson(const std::string& address, const std::string& job_id) {
  const ProcessResult status = RunCli(address, {"status", job_id, "--json"});
  EXPECT_EQ(status.exit_code, 0) << status.output;
  return nlohmann::json::parse(status.output, nullptr, /*allow_exceptions=*/false);
}

TEST(QueuedJobTest, AQueuedJobNamesTheDeviceItWaitsForUntilAWorkerWithOneComes) {
  TempDir dir;
  ASSERT_TRUE(WriteFileAtomic(dir / "copy.yaml", kSpec).ok());
  ASSERT_TRUE(WriteFileAtomic(dir / "copy.cpp", kSource).ok());
  CoordinatorProcess coordinator(dir.path());
  coordinator.Start();
  auto submit = [&](const std::string& spec) {
    const ProcessResult submitted = RunCli(coordinator.address(), {"submit", spec, "--json"});
    EXPECT_EQ(submitted.exit_code, 0) << submitted.output;
    auto job = nlohmann::json::parse(submitted.output, nullptr, /*allow_exceptions=*/false);
    return job.is_object() ? std::to_string(job["job_id"].get<int64_t>()) : "";
  };
  const std::string cuda = submit(SourcePath("examples/cuda/transpose/transpose.yaml"));
  const std::string cpu = submit(dir / "copy.yaml");

  EXPECT_EQ(StatusJson(coordinator.address(), cuda)["waiting_for"],
            "waiting for a worker with a device of vendor nvidia, arch sm_90 (no worker is "
            "registered)");
  const ProcessResult queued = RunCli(coordinator.address(), {"status", cpu});
  EXPECT_THAT(queued.output, HasSubstr("job " + cpu +
                                       " queued: kernel copy on (no device class yet)\n"
                                       "waiting for a worker with a device of vendor cpu, arch "
                                       "host (no worker is registered)\n"));

  auto worker = StartWorker(coordinator.address(), dir.path(), "w", "cpu:1");
  EXPECT_TRUE(WaitFor(
      [&] { return StatusJson(coordinator.address(), cpu)["state"] == "succeeded"; }, seconds(120)))
      << coordinator.Log() << worker->Log();
  EXPECT_EQ(StatusJson(coordinator.address(), cpu)["waiting_for"], "");
  EXPECT_THAT(RunCli(coordinator.address(), {"status", cpu}).output, Not(HasSubstr("waiting for")));

  // The CUDA job still waits, now beside a fleet of CPUs.
  const ProcessResult jobs = RunCli(coordinator.address(), {"jobs"});
  EXPECT_THAT(jobs.output, HasSubstr("job " + cuda +
                                     ": waiting for a worker with a device of vendor nvidia, arch "
                                     "sm_90 (registered: 1 live worker, with devices cpu/"));
  EXPECT_THAT(StatusJson(coordinator.address(), cuda)["waiting_for"].get<std::string>(),
              HasSubstr("(registered: 1 live worker, with devices cpu/"));
}

}  // namespace
}  // namespace tf::testing
