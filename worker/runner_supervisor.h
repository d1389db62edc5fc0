// The worker's side of one device's runner: keeps a tunefleet-runner child
// for the device (started on first use, reused across leases), feeds it
// leases and contains its faults. A step that outlives the spec's timeout is
// recorded TIMEOUT and one that kills the runner RUNTIME_FAILED; the runner
// is restarted and the lease goes on with the candidates left.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/subprocess.h"
#include "tunefleet/v1/worker.pb.h"
#include "worker/devices.h"

namespace tf::worker {

// Per-step limit when the spec sets no benchmark.timeout_s.
inline constexpr double kDefaultStepTimeoutS = 10;

// How the runner confines itself (sandbox::Enter, before its first request):
// its own work directory, no network, no new processes for CPU devices,
// memory and file-size limits, nobody instead of root. Artifacts are linked
// into the work directory before each lease, the only place it can read them.
struct RunnerSandbox {
  bool enabled = true;
  std::string work_dir;     // empty: a temporary folder, removed with the supervisor
  uint64_t memory_mb = 0;   // address space (CPU) or data size (GPU); 0: physical memory
  uint64_t file_mb = 1024;  // largest file it may write
};

class RunnerSupervisor {
 public:
  using ResultCallback = std::function<void(v1::CandidateResult)>;
  using StopCheck = std::function<bool()>;

  RunnerSupervisor(std::string runner_path, Device device, RunnerSandbox sandbox = {});
  ~RunnerSupervisor();

  // Runs the lease with its artifacts at `artifact_paths` (one, or for a
  // retime lease those of all its candidates): every candidate gets exactly
  // one result through `on_result`, as each finishes. `should_stop`
  // is polled several times a second; when it turns true the runner is
  // killed and kCancelled returned, the remaining candidates left without
  // results. Fails when the runner cannot be started.
  Status RunLease(const v1::Lease& lease, const std::vector<std::string>& artifact_paths,
                  const ResultCallback& on_result, const StopCheck& should_stop);

 private:
  Status EnsureRunner();
  // The artifact's path as the runner sees it: a link (or copy) in its work
  // directory, made afresh, since the runner can replace what it holds there.
  Result<std::string> StageArtifact(const std::string& artifact_path);

  const std::string runner_path_;
  const Device device_;
  RunnerSandbox sandbox_;
  bool remove_work_dir_ = false;
  std::unique_ptr<ChildProcess> runner_;
};

}  // namespace tf::worker
