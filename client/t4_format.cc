#include "client/t4_format.h"

namespace tf::client {
namespace {

// Empty for candidates without an outcome yet.
const char* Invalidity(v1::ResultStatus status) {
  switch (status) {
    case v1::RESULT_STATUS_OK:
      return "correct";
    case v1::RESULT_STATUS_COMPILE_FAILED:
      return "compile";
    case v1::RESULT_STATUS_RUNTIME_FAILED:
      return "runtime";
    case v1::RESULT_STATUS_WRONG_RESULT:
      return "correctness";
    case v1::RESULT_STATUS_TIMEOUT:
      return "timeout";
    case v1::RESULT_STATUS_PRUNED:
      return "constraints";
    default:
      return "";
  }
}

Json Measurement(const char* name, double value, const char* unit) {
  return {{"name", name}, {"value", value}, {"unit", unit}};
}

}  // namespace

Json T4Results(const std::vector<v1::CandidateResult>& results) {
  Json out = Json::array();
  for (const v1::CandidateResult& result : results) {
    const std::string invalidity = Invalidity(result.status());
    if (invalidity.empty()) continue;
    const bool correct = result.status() == v1::RESULT_STATUS_OK;
    Json measurements = Json::array();
    if (correct) {
      const v1::TimingStats& t = result.timing();
      measurements.push_back(Measurement("time", t.median_ns() / 1e6, "ms"));
      measurements.push_back(Measurement("time_p10", t.p10_ns() / 1e6, "ms"));
      measurements.push_back(Measurement("time_p90", t.p90_ns() / 1e6, "ms"));
      measurements.push_back(Measurement("time_min", t.min_ns() / 1e6, "ms"));
      if (t.gflops() > 0) measurements.push_back(Measurement("gflops", t.gflops(), "GFLOP/s"));
    }
    out.push_back({{"configuration", ConfigJson(result.config())},
                   {"problem", ProblemJson(result.problem())},
                   {"objectives", Json::array({"time"})},
                   {"times", Json::object()},
                   {"invalidity", invalidity},
                   {"correctness", correct ? 1 : 0},
                   {"measurements", std::move(measurements)}});
  }
  return {{"schema_version", "1.0.0"}, {"results", std::move(out)}};
}

}  // namespace tf::client
