#include "client/cli/results_import.h"

#include <cmath>
#include <filesystem>

#include "kernelspec/config.h"
#include "search/recorded_timing.h"

namespace tf::cli {
namespace {

namespace v1 = ::tunefleet::v1;

v1::ResultStatus StatusOf(search::Outcome outcome) {
  switch (outcome) {
    case search::Outcome::kOk:
      return v1::RESULT_STATUS_OK;
    case search::Outcome::kCompileFailed:
      return v1::RESULT_STATUS_COMPILE_FAILED;
    case search::Outcome::kRuntimeFailed:
      return v1::RESULT_STATUS_RUNTIME_FAILED;
    case search::Outcome::kWrongResult:
      return v1::RESULT_STATUS_WRONG_RESULT;
    case search::Outcome::kTimeout:
      return v1::RESULT_STATUS_TIMEOUT;
    case search::Outcome::kInvalid:
      return v1::RESULT_STATUS_PRUNED;
  }
  return v1::RESULT_STATUS_RUNTIME_FAILED;
}

// Integral floats (Kernel Tuner writes 1.0 as well as 1) are integers.
Result<v1::Value> ValueOf(const search::Value& value) {
  v1::Value out;
  if (const auto* i = std::get_if<int64_t>(&value)) {
    out.set_int_value(*i);
  } else if (const auto* s = std::get_if<std::string>(&value)) {
    out.set_str_value(*s);
  } else {
    const double d = std::get<double>(value);
    if (d != std::floor(d) || std::abs(d) > 9e15) {
      return Status::InvalidArgument(search::ValueText(value) +
                                     " is neither an integer nor a string");
    }
    out.set_int_value(static_cast<int64_t>(d));
  }
  return out;
}

}  // namespace

Result<v1::ImportResultsRequest> ImportRequestFromRecording(const search::RecordedSpace& recording,
                                                            const std::string& kernel,
                                                            const std::string& device_class,
                                                            const v1::Problem& problem,
                                                            const std::string& device) {
  const std::string file = std::filesystem::path(recording.path).filename().string();
  // A file that names its problem (TuneFleet's T4 export does) is not
  // stored as another's.
  if (!recording.problem.empty()) {
    Result<v1::Problem> recorded = kernelspec::ParseProblem(recording.problem);
    if (!recorded.ok() || kernelspec::ProblemKey(*recorded) != kernelspec::ProblemKey(problem)) {
      return Status::InvalidArgument(recording.path + " records " + recording.problem +
                                     ", not --problem " + kernelspec::ProblemText(problem));
    }
  }
  v1::ImportResultsRequest request;
  request.set_kernel(kernel);
  request.set_device_class(device_class);
  request.set_device(!device.empty()             ? device
                     : !recording.device.empty() ? recording.device
                                                 : file);
  request.set_source(file + " (" + recording.format + ")");
  *request.mutable_problem() = problem;
  const search::Space& space = recording.space;
  for (size_t id = 0; id < space.size(); ++id) {
    const uint32_t* indices = space.config(static_cast<search::ConfigId>(id));
    v1::ImportedResult* result = request.add_results();
    for (size_t p = 0; p < space.num_params(); ++p) {
      const search::Parameter& param = space.params()[p];
      Result<v1::Value> value = ValueOf(param.values[indices[p]]);
      if (!value.ok()) {
        return Status::InvalidArgument(recording.path + ": configuration " + space.Describe(id) +
                                       ": " + param.name + ": " + value.status().message());
      }
      v1::ParamSetting* setting = result->mutable_config()->add_settings();
      setting->set_name(param.name);
      *setting->mutable_value() = *std::move(value);
    }
    const search::RecordedResult& recorded = recording.results[id];
    result->set_status(StatusOf(recorded.outcome));
    if (recorded.outcome == search::Outcome::kOk) {
      if (!(recorded.time_ms > 0)) {
        return Status::InvalidArgument(recording.path + ": configuration " + space.Describe(id) +
                                       ": its time is not a positive number");
      }
      *result->mutable_timing() = search::RecordedTiming(recorded);
    }
  }
  return request;
}

}  // namespace tf::cli
