// The worker RPCs: registration, heartbeats and the listing, over the
// registry (coordinator/worker_registry.h); a heartbeat also renews leases.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "common/files.h"
#include "coordinator/coordinator.h"

namespace tf::coordinator {

void Coordinator::FleetChangedLocked() {
  for (auto& [id, job] : jobs_) {
    if (job.row.state == v1::JOB_STATE_QUEUED) ChangedLocked(job);
  }
}

void Coordinator::StrandedChangedLocked() {
  for (auto& [id, job] : jobs_) {
    const bool stranded = job.row.state == v1::JOB_STATE_RUNNING && LiveDevicesLocked(job) == 0;
    if (stranded == job.stranded) continue;
    job.stranded = stranded;
    if (stranded) {
      spdlog::warn("job {}: no live device of class {} is left; it waits for one", id,
                   job.row.device_class);
    }
    ChangedLocked(job);
  }
}

std::vector<v1::WorkerInfo> Coordinator::ListWorkers() {
  std::lock_guard lock(mu_);
  return workers_->List(NowUnixMs(), [this](const std::string& id) { return LeasesOfLocked(id); });
}

Result<v1::RegisterResponse> Coordinator::Register(const v1::RegisterRequest& request,
                                                   const auth::Caller& caller) {
  if (request.devices_size() == 0) {
    return Status::InvalidArgument("a worker must register at least one device");
  }
  std::lock_guard lock(mu_);
  TF_RETURN_IF_ERROR(workers_->CheckOwner(request.previous_worker_id(), caller));
  TF_ASSIGN_OR_RETURN(std::string id, workers_->Register(request, caller.token_id));
  spdlog::info("worker {} registered from {} with {} device(s), first {}", id, request.hostname(),
               request.devices_size(), request.devices(0).device_class());
  BindQueuedJobsLocked(id);
  FleetChangedLocked();
  v1::RegisterResponse response;
  response.set_worker_id(id);
  response.set_heartbeat_interval_ms(options_.heartbeat_interval_ms);
  response.set_lease_ttl_ms(options_.lease_ttl_ms);
  return response;
}

Result<v1::HeartbeatResponse> Coordinator::Heartbeat(const v1::HeartbeatRequest& request,
                                                     const auth::Caller& caller) {
  std::lock_guard lock(mu_);
  TF_RETURN_IF_ERROR(workers_->CheckOwner(request.worker_id(), caller));
  v1::HeartbeatResponse response;
  int64_t now = NowUnixMs();
  if (!workers_->Heartbeat(request.worker_id(), now)) {
    response.set_reregister(true);
    return response;
  }
  for (int64_t lease_id : request.lease_ids()) {
    auto l = leases_.find(lease_id);
    if (l == leases_.end() || l->second.worker_id != request.worker_id()) {
      response.add_cancelled_lease_ids(lease_id);
    } else if (!l->second.retime && AllReportedLocked(l->second)) {
      // Every candidate has its result, from this worker or from the twin of
      // a straggling lease: stop work that can no longer count.
      response.add_cancelled_lease_ids(lease_id);
      if (Status released = ReleaseLeaseLocked(lease_id); !released.ok()) {
        spdlog::error("lease {}: {}", lease_id, released.message());
      }
    } else {
      l->second.deadline_ms = now + options_.lease_ttl_ms;
    }
  }
  return response;
}

int64_t Coordinator::LeasesOfLocked(const std::string& worker_id) const {
  return std::count_if(leases_.begin(), leases_.end(),
                       [&](const auto& l) { return l.second.worker_id == worker_id; });
}

}  // namespace tf::coordinator
