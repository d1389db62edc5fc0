// The runner: loads a lease's artifact and, for each problem of the lease,
// makes the inputs once, runs the reference, then verifies and times every
// candidate on the backend of the device's kind (vendors/device_kinds.h). It runs inside
// tunefleet-runner, a child of the worker, so that a candidate that crashes
// or hangs takes down only that process. Prepared problems are kept for the
// next leases of the same job.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "common/status.h"
#include "runner/backend.h"
#include "runner/problem_cache.h"
#include "tunefleet/v1/runner.pb.h"

namespace tf::runner {

namespace v1 = ::tunefleet::v1;

// Receives the runner's events; an error (the worker went away) stops the run.
using EventSink = std::function<Status(const v1::RunnerEvent&)>;

// Problems prepared for earlier leases may keep half of the device's memory
// (DeviceInfo.memory_bytes); the other half is the candidates'. A GEMM of
// 4096^3 in fp16 takes 224 MiB (every 32 MiB matrix pristine and working, the
// output a third time as the reference); attention at 16k tokens 2 GiB.
// A device computing in host memory, which the host and other runners share,
// or one that does not say its memory: at most this.
inline constexpr int64_t kHostPreparedProblemBytes = int64_t{4} << 30;
int64_t PreparedProblemBytes(const v1::DeviceInfo& device, bool shares_host_memory);
// Bounds the device allocations that many small problems would keep.
inline constexpr size_t kMaxPreparedProblems = 64;

struct RunnerStats {
  int64_t problems_prepared = 0;  // inputs made and uploaded, reference run
  int64_t problems_reused = 0;    // found prepared by an earlier lease of the job
};

class Runner {
 public:
  // Without `prepared_problem_bytes`, the first request's device sets the
  // limit (PreparedProblemBytes).
  explicit Runner(std::optional<int64_t> prepared_problem_bytes = std::nullopt);

  // Announces each step (a problem's preparation, a candidate) before taking
  // it, sends each candidate's result after it, and ends with lease_done.
  // Candidates are run grouped by problem, problems in order of first use;
  // a retime lease's are timed in alternation instead (runner/alternation.h),
  // each sample announced, their results sent after the last round.
  // A problem prepared by an earlier lease of the same job (same job id,
  // spec and reference symbol) is reused without a preparation step; every
  // candidate still starts from the inputs as made. Failures of a candidate
  // or a problem become results. Returns sink errors, and kInternal after
  // sending the result of a candidate that left the device unusable (a
  // sticky driver error): the process must then exit so that the supervisor
  // starts a fresh one for the candidates left.
  Status Run(const v1::RunnerRequest& request, const EventSink& sink);

  // Totals over every request run.
  const RunnerStats& stats() const { return stats_; }

 private:
  // Made for the first request's device (vendor and ordinal); a runner
  // process serves one device.
  Result<Backend*> BackendFor(const v1::RunnerRequest& request);

  std::unique_ptr<Backend> backend_;
  const std::optional<int64_t> prepared_problem_bytes_;
  ProblemCache prepared_;  // after backend_: its device buffers are freed first
  RunnerStats stats_;
};

}  // namespace tf::runner
