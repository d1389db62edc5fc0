// The runner's backend for replay devices (replay_devices.h): Find looks a
// symbol (a config key, replay_toolchain.h) up in the recording, Answer
// gives its recorded outcome; buffers are not kept and nothing runs.
#pragma once

#include <memory>

#include "runner/backend.h"
#include "search/recorded_space.h"

namespace tf::replay {

namespace v1 = ::tunefleet::v1;

class ReplayBackend : public runner::Backend {
 public:
  // speed: the factor applied to recorded compile and run times before
  // sleeping them; 0 sleeps nothing.
  ReplayBackend(search::RecordedSpace recording, double speed);

  Status Load(const std::vector<std::string>& artifact_paths) override;
  // A recorded space has no artifacts: `symbol` is the configuration key.
  Result<runner::Launchable> Find(size_t artifact, const std::string& symbol) override;
  std::optional<v1::CandidateResult> Answer(const runner::Launchable& kernel) override;

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
  // What the recording was made on, for messages: its device, or its kernel.
  std::string Source() const;
  const search::RecordedResult& ResultOf(const runner::Launchable& kernel) const {
    return *static_cast<const search::RecordedResult*>(kernel.function);
  }

  search::RecordedSpace recording_;
  double speed_;
};

}  // namespace tf::replay
