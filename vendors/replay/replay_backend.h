// The runner's backend for replay devices (replay_devices.h): SelectProblem
// turns to the problem's recording, Find looks a symbol (a config key,
// replay_toolchain.h) up in it, Answer gives its recorded outcome; buffers are
// not kept and nothing runs.
#pragma once

#include <memory>

#include "runner/backend.h"
#include "search/recorded_space.h"

namespace tf::replay {

namespace v1 = ::tunefleet::v1;

class ReplayBackend : public runner::Backend {
 public:
  // speed: the factor applied to recorded compile and run times before
  // sleeping them; 0 sleeps nothing. A recording that names its problem
  // answers that problem only (its variables in any order); one that names
  // none (the only one) answers every problem.
  // `recorded_on`: the device's model, as discovery named it (a T4 file names none).
  ReplayBackend(std::vector<search::RecordedSpace> recordings, std::string recorded_on,
                double speed);

  Status Load(const std::vector<std::string>& artifact_paths) override;
  Status SelectProblem(const v1::Problem& problem) override;
  // A recorded space has no artifacts: `symbol` is the configuration key.
  Result<runner::Launchable> Find(size_t artifact, const std::string& symbol) override;
  std::optional<v1::CandidateResult> Answer(const runner::Launchable& kernel,
                                            double early_stop_ns) override;

  // Nothing runs: no buffers are kept and every output matches.
  Result<std::unique_ptr<runner::DeviceBuffers>> Upload(
      std::vector<runner::HostBuffer> initial) override;
  Status Reset(runner::DeviceBuffers& buffers, const std::vector<int>& outputs) override;
  Status Run(const runner::Launchable& kernel, runner::DeviceBuffers& buffers,
             const std::vector<int64_t>& scalars) override;
  Status KeepReference(runner::DeviceBuffers& buffers, const std::vector<int>& outputs) override;
  Result<runner::Comparison> Compare(runner::DeviceBuffers& buffers, int index, double rtol,
                                     double atol) override;
  Result<v1::TimingStats> Time(const runner::Launchable& kernel, runner::DeviceBuffers& buffers,
                               const std::vector<int64_t>& scalars,
                               const v1::BenchmarkSettings& settings) override;

 private:
  // What the recording in use was made on, for messages: the device, and the
  // problem where it names one.
  std::string Source() const;
  const search::RecordedSpace& recording() const { return recordings_[current_]; }
  const search::RecordedResult& ResultOf(const runner::Launchable& kernel) const {
    return *static_cast<const search::RecordedResult*>(kernel.function);
  }

  std::vector<search::RecordedSpace> recordings_;
  std::vector<std::string> problem_keys_;  // kernelspec::ProblemKey of each recording's problem
  std::string recorded_on_;
  size_t current_ = 0;
  double speed_;
};

}  // namespace tf::replay
