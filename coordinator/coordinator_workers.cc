// The worker registry: registration, heartbeats and the devices workers offer.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "common/files.h"
#include "coordinator/coordinator.h"

namespace tf::coordinator {

Status Coordinator::CheckWorkerOwnerLocked(const std::string& worker_id,
                                           const auth::Caller& caller) const {
  if (!caller.own_only) return Status::Ok();
  auto w = workers_.find(worker_id);
  if (w == workers_.end() || w->second.row.owner_token == caller.token_id) return Status::Ok();
  return Status::PermissionDenied("worker " + worker_id + " belongs to another token");
}

bool Coordinator::AliveLocked(const Worker& worker, int64_t now) const {
  return now - worker.last_heartbeat_ms <= 3 * options_.heartbeat_interval_ms;
}

void Coordinator::FleetChangedLocked() {
  for (auto& [id, job] : jobs_) {
    if (job.row.state == v1::JOB_STATE_QUEUED) ChangedLocked(job);
  }
}

std::vector<v1::WorkerInfo> Coordinator::ListWorkers() {
  std::lock_guard lock(mu_);
  int64_t now = NowUnixMs();
  std::vector<v1::WorkerInfo> out;
  for (const auto& [id, w] : workers_) {
    v1::WorkerInfo info;
    info.set_worker_id(id);
    info.set_hostname(w.row.hostname);
    for (const auto& d : w.row.devices) *info.add_devices() = d;
    info.set_alive(AliveLocked(w, now));
    info.set_last_heartbeat_unix_ms(w.last_heartbeat_ms);
    info.set_active_leases(LeasesOfLocked(id));
    info.set_results_reported(w.results_reported);
    out.push_back(std::move(info));
  }
  return out;
}

Result<v1::RegisterResponse> Coordinator::Register(const v1::RegisterRequest& request,
                                                   const auth::Caller& caller) {
  if (request.devices_size() == 0) {
    return Status::InvalidArgument("a worker must register at least one device");
  }
  std::lock_guard lock(mu_);
  TF_RETURN_IF_ERROR(CheckWorkerOwnerLocked(request.previous_worker_id(), caller));
  Worker w;
  w.row.id = !request.previous_worker_id().empty()
                 ? request.previous_worker_id()
                 : request.hostname() + "-" + std::to_string(NowUnixMs() % 1000000) + "-" +
                       std::to_string(next_worker_seq_++);
  w.row.hostname = request.hostname();
  w.row.devices.assign(request.devices().begin(), request.devices().end());
  w.row.registered_ms = NowUnixMs();
  w.row.owner_token = caller.token_id;
  w.last_heartbeat_ms = w.row.registered_ms;
  if (auto old = workers_.find(w.row.id); old != workers_.end()) {
    w.results_reported = old->second.results_reported;
  } else if (!request.previous_worker_id().empty()) {
    // Back after it was forgotten: what it reported before is still there.
    TF_ASSIGN_OR_RETURN(w.results_reported, db_->CountWorkerResults(w.row.id));
  }
  TF_RETURN_IF_ERROR(db_->PutWorker(w.row));
  std::string id = w.row.id;
  workers_[id] = std::move(w);
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
  TF_RETURN_IF_ERROR(CheckWorkerOwnerLocked(request.worker_id(), caller));
  v1::HeartbeatResponse response;
  auto w = workers_.find(request.worker_id());
  if (w == workers_.end() || w->second.expired) {
    response.set_reregister(true);
    return response;
  }
  int64_t now = NowUnixMs();
  w->second.last_heartbeat_ms = now;
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

void Coordinator::ForgetSilentWorkersLocked(int64_t now) {
  // Stamped once, with its last heartbeat; one loaded at this start that
  // has not registered since beat until the start at the latest.
  std::vector<std::pair<Worker*, int64_t>> found_silent;
  std::vector<std::string> forgotten;
  for (auto& [id, w] : workers_) {
    if (!w.expired) continue;
    if (w.row.silent_since_ms == 0) {
      found_silent.emplace_back(&w, w.last_heartbeat_ms > 0 ? w.last_heartbeat_ms : now);
    } else if (now - w.row.silent_since_ms > options_.worker_retention_ms &&
               LeasesOfLocked(id) == 0) {
      forgotten.push_back(id);
    }
  }
  // Not fsynced: a stamp or a deletion lost in a power loss is done again.
  if (!found_silent.empty()) {
    auto txn = db_->Begin(/*fsync=*/false);
    Status stored = txn->begin_status();
    for (const auto& [w, since] : found_silent) {
      db::WorkerRow row = w->row;
      row.silent_since_ms = since;
      if (stored.ok()) stored = db_->PutWorker(row);
    }
    if (stored.ok()) stored = txn->Commit();
    if (!stored.ok()) {
      spdlog::error("cannot store when workers went silent: {}; retrying", stored.message());
      return;
    }
    for (const auto& [w, since] : found_silent) w->row.silent_since_ms = since;
  }
  if (forgotten.empty()) return;
  auto txn = db_->Begin(/*fsync=*/false);
  Status deleted = txn->begin_status();
  for (const std::string& id : forgotten) {
    if (deleted.ok()) deleted = db_->DeleteWorker(id);
  }
  if (deleted.ok()) deleted = txn->Commit();
  if (!deleted.ok()) {
    spdlog::error("cannot forget silent workers: {}; retrying", deleted.message());
    return;
  }
  for (const std::string& id : forgotten) {
    spdlog::info(
        "worker {} forgotten: silent for {} ms with no lease (its results stay; it registers "
        "again if it comes back)",
        id, now - workers_[id].row.silent_since_ms);
    workers_.erase(id);
  }
}

const v1::DeviceInfo* Coordinator::FindDeviceLocked(const std::string& worker_id,
                                                    int device_index) const {
  auto w = workers_.find(worker_id);
  if (w == workers_.end() || w->second.expired) return nullptr;
  for (const auto& d : w->second.row.devices) {
    if (d.index() == device_index) return &d;
  }
  return nullptr;
}

}  // namespace tf::coordinator
