#include "client/cli/results_import.h"

#include <cmath>
#include <filesystem>
#include <optional>

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

// The request that imports `recording` as results of `problem`.
Result<v1::ImportResultsRequest> RequestOf(const search::RecordedSpace& recording,
                                           const std::string& kernel,
                                           const std::string& device_class,
                                           const v1::Problem& problem, const std::string& device) {
  const std::string file = std::filesystem::path(recording.path).filename().string();
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

}  // namespace

Result<std::vector<v1::ImportResultsRequest>> ImportRequests(
    const std::vector<search::RecordedSpace>& recordings, const std::string& kernel,
    const std::string& device_class, const std::string& problem, const std::string& device) {
  const std::string& path = recordings.front().path;
  std::optional<v1::Problem> wanted;
  if (!problem.empty()) {
    Result<v1::Problem> parsed = kernelspec::ParseProblem(problem);
    if (!parsed.ok()) return Status::InvalidArgument("--problem: " + parsed.status().message());
    wanted = *std::move(parsed);
  }
  std::vector<v1::ImportResultsRequest> requests;
  std::string recorded;  // the problems the file names, for messages
  for (const search::RecordedSpace& recording : recordings) {
    if (recording.problem.empty()) {  // the file's only recording
      if (!wanted) {
        return Status::InvalidArgument(path +
                                       " names no problem: --problem NAME=VALUE,... says which "
                                       "it was recorded for");
      }
      TF_ASSIGN_OR_RETURN(requests.emplace_back(),
                          RequestOf(recording, kernel, device_class, *wanted, device));
      continue;
    }
    Result<v1::Problem> named = kernelspec::ParseProblem(recording.problem);
    if (!named.ok()) {
      return Status::InvalidArgument(path + ": its problem " + recording.problem + ": " +
                                     named.status().message());
    }
    recorded += (recorded.empty() ? "" : "; ") + recording.problem;
    if (wanted && kernelspec::ProblemKey(*named) != kernelspec::ProblemKey(*wanted)) continue;
    TF_ASSIGN_OR_RETURN(requests.emplace_back(), RequestOf(recording, kernel, device_class,
                                                           wanted.value_or(*named), device));
  }
  if (requests.empty()) {
    return Status::InvalidArgument(path + " records " + recorded + ", not --problem " +
                                   kernelspec::ProblemText(*wanted));
  }
  return requests;
}

}  // namespace tf::cli
