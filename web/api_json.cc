#include "web/api_json.h"

namespace tf::web {

namespace v1 = ::tunefleet::v1;
using client::Json;

Json ResultJson(const coordinator::Coordinator::RecordedResult& recorded) {
  Json out = client::ResultJson(recorded.result);
  out["recorded_unix_ms"] = recorded.recorded_unix_ms;
  return out;
}

Json WorkersJson(const std::vector<v1::WorkerInfo>& workers, const coordinator::Activity& activity,
                 const std::function<bool(int64_t owner_token)>& shows_job) {
  Json out = Json::array();
  for (const v1::WorkerInfo& worker : workers) {
    Json item = client::WorkerJson(worker);
    for (Json& device : item["devices"]) {
      Json leases = Json::array();
      for (const auto& lease : activity.leases) {
        if (lease.worker_id != worker.worker_id() || lease.device_index != device["index"]) {
          continue;
        }
        const bool shown = shows_job(lease.owner_token);
        leases.push_back({{"lease_id", lease.lease_id},
                          {"job_id", shown ? Json(lease.job_id) : Json()},
                          {"kernel", shown ? Json(lease.kernel) : Json()},
                          {"candidates", lease.candidates},
                          {"granted_unix_ms", lease.granted_unix_ms},
                          {"backup", lease.backup}});
      }
      device["leases"] = std::move(leases);
    }
    out.push_back(std::move(item));
  }
  return out;
}

}  // namespace tf::web
