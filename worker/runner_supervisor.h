// The worker's side of one device's runner: keeps a tunefleet-runner child
// for the device (started on first use, reused across leases), feeds it
// leases and contains its faults. A step that outlives the spec's timeout is
// recorded TIMEOUT and one that kills the runner RUNTIME_FAILED; the runner
// is restarted and the lease goes on with the candidates left.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "common/status.h"
#include "common/subprocess.h"
#include "tunefleet/v1/worker.pb.h"
#include "worker/devices.h"

namespace tf::worker {

// Per-step limit when the spec sets no benchmark.timeout_s.
inline constexpr double kDefaultStepTimeoutS = 10;

class RunnerSupervisor {
 public:
  using ResultCallback = std::function<void(v1::CandidateResult)>;
  using StopCheck = std::function<bool()>;

  RunnerSupervisor(std::string runner_path, Device device);
  ~RunnerSupervisor();

  // Runs the lease with its artifact at `artifact_path`: every candidate gets
  // exactly one result through `on_result`, as each finishes. `should_stop`
  // is polled several times a second; when it turns true the runner is
  // killed and kCancelled returned, the remaining candidates left without
  // results. Fails when the runner cannot be started.
  Status RunLease(const v1::Lease& lease, const std::string& artifact_path,
                  const ResultCallback& on_result, const StopCheck& should_stop);

 private:
  Status EnsureRunner();

  const std::string runner_path_;
  const Device device_;
  std::unique_ptr<ChildProcess> runner_;
};

}  // namespace tf::worker
