#include "web/api_json.h"

#include <algorithm>
#include <cctype>

namespace tf::web {
namespace {

namespace v1 = ::tunefleet::v1;
using nlohmann::json;

std::string Lower(std::string name, std::string_view prefix) {
  name.erase(0, std::min(name.size(), prefix.size()));
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return name;
}

json ConfigJson(const v1::Config& config) {
  json out = json::object();
  for (const auto& s : config.settings()) {
    if (s.value().has_str_value()) {
      out[s.name()] = s.value().str_value();
    } else {
      out[s.name()] = s.value().int_value();
    }
  }
  return out;
}

json ProblemJson(const v1::Problem& problem) {
  json out = json::object();
  for (const auto& v : problem.vars()) out[v.name()] = v.value();
  return out;
}

json TimingJson(const v1::TimingStats& t) {
  return {{"median_ns", t.median_ns()}, {"p10_ns", t.p10_ns()}, {"p90_ns", t.p90_ns()},
          {"min_ns", t.min_ns()},       {"gflops", t.gflops()}, {"repeats", t.repeats()}};
}

}  // namespace

json JobJson(const v1::Job& job) {
  json best = json::array();
  for (const auto& b : job.best()) {
    best.push_back({{"problem", ProblemJson(b.problem())},
                    {"config", ConfigJson(b.config())},
                    {"timing", TimingJson(b.timing())},
                    {"candidate_id", b.candidate_id()}});
  }
  return {{"id", job.job_id()},
          {"kernel", job.kernel()},
          {"state", Lower(v1::JobState_Name(job.state()), "JOB_STATE_")},
          {"device_class", job.device_class()},
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
          {"best", std::move(best)}};
}

json ResultJson(const coordinator::Coordinator::RecordedResult& recorded) {
  const v1::CandidateResult& r = recorded.result;
  return {{"candidate_id", r.candidate_id()},
          {"status", Lower(v1::ResultStatus_Name(r.status()), "RESULT_STATUS_")},
          {"error", r.error()},
          {"timing", TimingJson(r.timing())},
          {"max_abs_error", r.max_abs_error()},
          {"config", ConfigJson(r.config())},
          {"problem", ProblemJson(r.problem())},
          {"device_class", r.device_class()},
          {"worker", r.worker()},
          {"recorded_unix_ms", recorded.recorded_unix_ms}};
}

json WorkersJson(const std::vector<v1::WorkerInfo>& workers,
                 const coordinator::Activity& activity) {
  json out = json::array();
  for (const auto& w : workers) {
    json devices = json::array();
    for (const auto& d : w.devices()) {
      json leases = json::array();
      for (const auto& l : activity.leases) {
        if (l.worker_id != w.worker_id() || l.device_index != d.index()) continue;
        leases.push_back({{"lease_id", l.lease_id},
                          {"job_id", l.job_id},
                          {"kernel", l.kernel},
                          {"candidates", l.candidates},
                          {"granted_unix_ms", l.granted_unix_ms},
                          {"backup", l.backup}});
      }
      devices.push_back({{"index", d.index()},
                         {"vendor", d.vendor()},
                         {"model", d.model()},
                         {"arch", d.arch()},
                         {"device_class", d.device_class()},
                         {"memory_bytes", d.memory_bytes()},
                         {"compute_units", d.compute_units()},
                         {"leases", std::move(leases)}});
    }
    out.push_back({{"id", w.worker_id()},
                   {"hostname", w.hostname()},
                   {"alive", w.alive()},
                   {"last_heartbeat_unix_ms", w.last_heartbeat_unix_ms()},
                   {"active_leases", w.active_leases()},
                   {"results_reported", w.results_reported()},
                   {"devices", std::move(devices)}});
  }
  return out;
}

}  // namespace tf::web
