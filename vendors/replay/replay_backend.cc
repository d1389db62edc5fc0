#include "vendors/replay/replay_backend.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "kernelspec/config.h"
#include "search/recorded_timing.h"

namespace tf::replay {
namespace {

class NoBuffers : public runner::DeviceBuffers {
 public:
  int64_t bytes() const override { return 0; }
};

}  // namespace

ReplayBackend::ReplayBackend(std::vector<search::RecordedSpace> recordings, std::string recorded_on,
                             double speed)
    : recordings_(std::move(recordings)), recorded_on_(std::move(recorded_on)), speed_(speed) {
  for (const search::RecordedSpace& r : recordings_) {
    Result<v1::Problem> problem = kernelspec::ParseProblem(r.problem);
    // Discovery refused a problem that does not parse; an empty one answers every problem.
    problem_keys_.push_back(problem.ok() ? kernelspec::ProblemKey(*problem) : "");
  }
}

std::string ReplayBackend::Source() const {
  const search::RecordedSpace& r = recording();
  return recorded_on_ + (r.problem.empty() ? "" : " " + r.problem) + " (" + r.format + ")";
}

Status ReplayBackend::Load(const std::vector<std::string>&) { return Status::Ok(); }

Status ReplayBackend::SelectProblem(const v1::Problem& problem) {
  const std::string key = kernelspec::ProblemKey(problem);
  std::string recorded;
  for (size_t i = 0; i < recordings_.size(); ++i) {
    const std::string& named = recordings_[i].problem;
    if (named.empty() || problem_keys_[i] == key) {
      current_ = i;
      return Status::Ok();
    }
    recorded += (recorded.empty() ? "" : "; ") + named;
  }
  return Status::NotFound("no recording of " + kernelspec::ProblemText(problem) +
                          " on this replay device (recorded: " + recorded + ")");
}

Result<runner::Launchable> ReplayBackend::Find(size_t, const std::string& symbol) {
  TF_ASSIGN_OR_RETURN(v1::Config config, kernelspec::ParseConfigKey(symbol));
  const search::Space& space = recording().space;
  auto outside = [&](const std::string& why) {
    return Status::NotFound("configuration " + symbol + " is outside the space recorded on " +
                            Source() + ": " + why);
  };
  std::vector<uint32_t> indices;
  for (const search::Parameter& param : space.params()) {
    auto setting = std::find_if(config.settings().begin(), config.settings().end(),
                                [&](const v1::ParamSetting& s) { return s.name() == param.name; });
    if (setting == config.settings().end()) return outside("it has no " + param.name);
    const std::string value = kernelspec::ValueText(setting->value());
    auto known =
        std::find_if(param.values.begin(), param.values.end(),
                     [&](const search::Value& v) { return search::ValueText(v) == value; });
    if (known == param.values.end()) {
      return outside(param.name + "=" + value + " was never recorded");
    }
    indices.push_back(static_cast<uint32_t>(known - param.values.begin()));
  }
  if (static_cast<size_t>(config.settings_size()) != space.num_params()) {
    return outside("the recording has " + std::to_string(space.num_params()) + " parameters");
  }
  std::optional<search::ConfigId> id = space.Find(indices.data());
  if (!id) return outside("not recorded");
  runner::Launchable kernel;
  kernel.function = const_cast<search::RecordedResult*>(&recording().results[*id]);
  return kernel;
}

std::optional<v1::CandidateResult> ReplayBackend::Answer(const runner::Launchable& kernel,
                                                         double early_stop_ns) {
  const search::RecordedResult& r = ResultOf(kernel);
  double running_ms = r.benchmark_ms;
  if (running_ms < 0) {
    running_ms = 0;
    for (double run : r.runtimes_ms) running_ms += run;
  }
  if (r.outcome == search::Outcome::kOk && early_stop_ns > 0 && r.time_ms * 1e6 > early_stop_ns) {
    // The runner stops it after its estimate's runs.
    running_ms = std::min(running_ms, runner::kEarlyStopRuns * r.time_ms);
  }
  const double spent_ms = std::max(0.0, r.compile_ms) + running_ms;
  if (speed_ > 0 && spent_ms > 0) {
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(spent_ms * speed_));
  }
  v1::CandidateResult result;
  const std::string recorded = "recorded on " + Source() + ": " + search::OutcomeName(r.outcome);
  switch (r.outcome) {
    case search::Outcome::kOk:
      result.set_status(v1::RESULT_STATUS_OK);
      *result.mutable_timing() = search::RecordedTiming(r);
      return result;
    case search::Outcome::kCompileFailed:
      result.set_status(v1::RESULT_STATUS_COMPILE_FAILED);
      break;
    case search::Outcome::kRuntimeFailed:
      result.set_status(v1::RESULT_STATUS_RUNTIME_FAILED);
      break;
    case search::Outcome::kWrongResult:
      result.set_status(v1::RESULT_STATUS_WRONG_RESULT);
      break;
    case search::Outcome::kTimeout:
      result.set_status(v1::RESULT_STATUS_TIMEOUT);
      break;
    case search::Outcome::kInvalid:
      result.set_status(v1::RESULT_STATUS_PRUNED);
      break;
  }
  result.set_error(recorded);
  return result;
}

Result<std::unique_ptr<runner::DeviceBuffers>> ReplayBackend::Upload(
    std::vector<runner::HostBuffer>) {
  return std::unique_ptr<runner::DeviceBuffers>(new NoBuffers);
}

Status ReplayBackend::Reset(runner::DeviceBuffers&, const std::vector<int>&) {
  return Status::Ok();
}

Status ReplayBackend::Run(const runner::Launchable&, runner::DeviceBuffers&,
                          const std::vector<int64_t>&) {
  return Status::Ok();
}

Status ReplayBackend::KeepReference(runner::DeviceBuffers&, const std::vector<int>&) {
  return Status::Ok();
}

Result<runner::Comparison> ReplayBackend::Compare(runner::DeviceBuffers&, int, double, double) {
  return runner::Comparison{};
}

Result<v1::TimingStats> ReplayBackend::Time(const runner::Launchable& kernel,
                                            runner::DeviceBuffers&, const std::vector<int64_t>&,
                                            const v1::BenchmarkSettings&) {
  const search::RecordedResult& r = ResultOf(kernel);
  if (r.outcome != search::Outcome::kOk) {
    return Status::FailedPrecondition(std::string("recorded as ") + search::OutcomeName(r.outcome));
  }
  return search::RecordedTiming(r);
}

}  // namespace tf::replay
