#include "client/json_format.h"

#include <map>

#include "auth/roles.h"
#include "client/job_state.h"

namespace tf::client {
namespace {

// median_ns, p10_ns, p90_ns, gflops: the figures every listing shows.
void AddTiming(const v1::TimingStats& timing, Json* out) {
  (*out)["median_ns"] = timing.median_ns();
  (*out)["p10_ns"] = timing.p10_ns();
  (*out)["p90_ns"] = timing.p90_ns();
  (*out)["gflops"] = timing.gflops();
}

Json DeviceJson(const v1::DeviceInfo& device) {
  // Sorted: protobuf maps iterate in no fixed order.
  const std::map<std::string, int64_t> sorted(device.properties().begin(),
                                              device.properties().end());
  Json properties = Json::object();
  for (const auto& [name, value] : sorted) properties[name] = value;
  Json labels = Json::array();
  for (const std::string& label : device.labels()) labels.push_back(label);
  return {{"index", device.index()},
          {"vendor", device.vendor()},
          {"model", device.model()},
          {"arch", device.arch()},
          {"device_class", device.device_class()},
          {"memory_bytes", device.memory_bytes()},
          {"compute_units", device.compute_units()},
          {"labels", std::move(labels)},
          {"properties", properties},
          {"toolchains", std::map<std::string, std::string>(device.toolchains().begin(),
                                                            device.toolchains().end())}};
}

}  // namespace

const char* ResultStatusName(v1::ResultStatus status) {
  switch (status) {
    case v1::RESULT_STATUS_OK:
      return "ok";
    case v1::RESULT_STATUS_COMPILE_FAILED:
      return "compile_failed";
    case v1::RESULT_STATUS_RUNTIME_FAILED:
      return "runtime_failed";
    case v1::RESULT_STATUS_WRONG_RESULT:
      return "wrong_result";
    case v1::RESULT_STATUS_TIMEOUT:
      return "timeout";
    case v1::RESULT_STATUS_PRUNED:
      return "pruned";
    case v1::RESULT_STATUS_EARLY_STOPPED:
      return "early_stopped";
    default:
      return "unknown";
  }
}

Json ValueJson(const v1::Value& value) {
  if (value.has_int_value()) return value.int_value();
  return value.str_value();
}

Json ConfigJson(const v1::Config& config) {
  Json out = Json::object();
  for (const v1::ParamSetting& setting : config.settings()) {
    out[setting.name()] = ValueJson(setting.value());
  }
  return out;
}

Json ProblemJson(const v1::Problem& problem) {
  Json out = Json::object();
  for (const v1::ProblemVar& var : problem.vars()) out[var.name()] = var.value();
  return out;
}

Json JobJson(const v1::Job& job) {
  Json out = {{"job_id", job.job_id()},
              {"kernel", job.kernel()},
              {"state", JobStateName(job.state())},
              {"device_class", job.device_class()},
              {"waiting_for", job.waiting_for()},
              {"toolchain", job.toolchain()},
              {"fingerprint", job.fingerprint()},
              {"priority", job.priority()},
              {"candidates_total", job.candidates_total()},
              {"candidates_done", job.candidates_done()},
              {"candidates_failed", job.candidates_failed()},
              {"candidates_cached", job.candidates_cached()},
              {"configurations", job.configurations()},
              {"builds_done", job.builds_done()},
              {"created_unix_ms", job.created_unix_ms()},
              {"updated_unix_ms", job.updated_unix_ms()},
              {"error", job.error()},
              {"stop_reason", job.stop_reason()},
              {"problems_retiming", job.problems_retiming()}};
  Json best = Json::array();
  for (const v1::BestEntry& entry : job.best()) {
    Json item = {{"problem", ProblemJson(entry.problem())},
                 {"config", ConfigJson(entry.config())},
                 {"candidate_id", entry.candidate_id()},
                 {"confirmed_by_retiming", entry.confirmed_by_retiming()}};
    AddTiming(entry.timing(), &item);
    best.push_back(std::move(item));
  }
  out["best"] = std::move(best);
  Json without = Json::array();
  for (const v1::Problem& problem : job.problems_without_success()) {
    without.push_back(ProblemJson(problem));
  }
  out["problems_without_success"] = std::move(without);
  return out;
}

Json BestJson(const v1::QueryBestResponse& best) {
  Json out = {{"kernel", best.kernel()},
              {"problem", ProblemJson(best.problem())},
              {"device_class", best.device_class()},
              {"config", ConfigJson(best.config())},
              {"exact", best.exact()}};
  AddTiming(best.timing(), &out);
  out["job_id"] = best.job_id();
  out["fingerprint"] = best.fingerprint();
  out["confirmed_by_retiming"] = best.confirmed_by_retiming();
  return out;
}

Json ResultJson(const v1::CandidateResult& result) {
  Json out = {
      {"candidate_id", result.candidate_id()}, {"status", ResultStatusName(result.status())},
      {"config", ConfigJson(result.config())}, {"problem", ProblemJson(result.problem())},
      {"device_class", result.device_class()}, {"worker", result.worker()}};
  AddTiming(result.timing(), &out);
  out["max_abs_error"] = result.max_abs_error();
  out["error"] = result.error();
  Json warnings = Json::array();
  for (const std::string& warning : result.resources().performance_warnings()) {
    warnings.push_back(warning);
  }
  out["performance_warnings"] = std::move(warnings);
  if (result.retiming().repeats() > 0) {
    Json retiming = {{"samples", result.retiming().repeats()}};
    AddTiming(result.retiming(), &retiming);
    out["retiming"] = std::move(retiming);
    out["retime_winner"] = result.retime_winner();
  }
  return out;
}

Json WorkerJson(const v1::WorkerInfo& worker) {
  Json devices = Json::array();
  for (const v1::DeviceInfo& device : worker.devices()) devices.push_back(DeviceJson(device));
  return {{"worker_id", worker.worker_id()},
          {"hostname", worker.hostname()},
          {"alive", worker.alive()},
          {"last_heartbeat_unix_ms", worker.last_heartbeat_unix_ms()},
          {"active_leases", worker.active_leases()},
          {"results_reported", worker.results_reported()},
          {"devices", std::move(devices)}};
}

Json TokenJson(const v1::TokenInfo& token) {
  return {{"token_id", token.token_id()},
          {"name", token.name()},
          {"role", auth::RoleName(token.role())},
          {"created_unix_ms", token.created_unix_ms()},
          {"revoked_unix_ms", token.revoked_unix_ms()}};
}

Json KernelJson(const v1::TunedKernel& kernel) {
  Json device_classes = Json::array();
  for (const std::string& device_class : kernel.device_classes()) {
    device_classes.push_back(device_class);
  }
  return {{"name", kernel.name()},
          {"owner", kernel.owner()},
          {"tuned", kernel.tuned()},
          {"device_classes", std::move(device_classes)},
          {"last_tuned_unix_ms", kernel.last_tuned_unix_ms()}};
}

}  // namespace tf::client
