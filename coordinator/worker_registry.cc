#include "coordinator/worker_registry.h"

#include <spdlog/spdlog.h>

#include <utility>

#include "common/files.h"

namespace tf::coordinator {

Result<std::unique_ptr<WorkerRegistry>> WorkerRegistry::Load(db::TuningDb& db,
                                                             const Options& options) {
  std::unique_ptr<WorkerRegistry> registry(new WorkerRegistry(db, options));
  TF_ASSIGN_OR_RETURN(auto rows, db.LoadWorkers());
  for (auto& row : rows) {
    if (row.forgotten) {
      registry->forgotten_[row.id] = row.owner_token;
      continue;
    }
    Worker w;
    w.row = std::move(row);
    w.expired = true;  // known, but asked to register again before new leases
    TF_ASSIGN_OR_RETURN(w.results_reported, db.CountWorkerResults(w.row.id));
    registry->next_worker_seq_++;
    registry->workers_[w.row.id] = std::move(w);
  }
  return registry;
}

bool WorkerRegistry::Alive(const Worker& worker, int64_t now) const {
  return now - worker.last_heartbeat_ms <= 3 * options_.heartbeat_interval_ms;
}

Status WorkerRegistry::CheckOwner(const std::string& worker_id, const auth::Caller& caller) const {
  if (!caller.own_only) return Status::Ok();
  int64_t owner;
  if (auto w = workers_.find(worker_id); w != workers_.end()) {
    owner = w->second.row.owner_token;
  } else if (auto f = forgotten_.find(worker_id); f != forgotten_.end()) {
    // Forgotten, still its token's: candidates may still name it as theirs.
    owner = f->second;
  } else {
    return Status::Ok();
  }
  if (owner == caller.token_id) return Status::Ok();
  return Status::PermissionDenied("worker " + worker_id + " belongs to another token");
}

const v1::DeviceInfo* WorkerRegistry::FindDevice(const std::string& worker_id,
                                                 int device_index) const {
  auto w = workers_.find(worker_id);
  if (w == workers_.end() || w->second.expired) return nullptr;
  for (const auto& d : w->second.row.devices) {
    if (d.index() == device_index) return &d;
  }
  return nullptr;
}

std::vector<v1::WorkerInfo> WorkerRegistry::List(int64_t now, const LeasesOf& leases_of) const {
  std::vector<v1::WorkerInfo> out;
  for (const auto& [id, w] : workers_) {
    v1::WorkerInfo info;
    info.set_worker_id(id);
    info.set_hostname(w.row.hostname);
    for (const auto& d : w.row.devices) *info.add_devices() = d;
    info.set_alive(Alive(w, now));
    info.set_last_heartbeat_unix_ms(w.last_heartbeat_ms);
    info.set_active_leases(leases_of(id));
    info.set_results_reported(w.results_reported);
    out.push_back(std::move(info));
  }
  return out;
}

Result<std::string> WorkerRegistry::Register(const v1::RegisterRequest& request,
                                             int64_t owner_token) {
  Worker w;
  w.row.id = request.previous_worker_id();
  if (w.row.id.empty()) {
    // An id no worker had: another's, even a forgotten one's, would make it
    // the owner of what that one was leased.
    do {
      w.row.id = request.hostname() + "-" + std::to_string(NowUnixMs() % 1000000) + "-" +
                 std::to_string(next_worker_seq_++);
    } while (Known(w.row.id));
  }
  w.row.hostname = request.hostname();
  w.row.devices.assign(request.devices().begin(), request.devices().end());
  w.row.registered_ms = NowUnixMs();
  w.row.owner_token = owner_token;
  w.last_heartbeat_ms = w.row.registered_ms;
  if (auto old = workers_.find(w.row.id); old != workers_.end()) {
    w.results_reported = old->second.results_reported;
  } else if (!request.previous_worker_id().empty()) {
    // Back after it was forgotten: what it reported before is still there.
    TF_ASSIGN_OR_RETURN(w.results_reported, db_.CountWorkerResults(w.row.id));
  }
  TF_RETURN_IF_ERROR(db_.PutWorker(w.row));  // forgotten no more
  std::string id = w.row.id;
  forgotten_.erase(id);
  workers_[id] = std::move(w);
  return id;
}

bool WorkerRegistry::Heartbeat(const std::string& worker_id, int64_t now) {
  auto w = workers_.find(worker_id);
  if (w == workers_.end() || w->second.expired) return false;
  w->second.last_heartbeat_ms = now;
  return true;
}

void WorkerRegistry::HeardFrom(const std::string& worker_id, int64_t now) {
  if (auto w = workers_.find(worker_id); w != workers_.end()) w->second.last_heartbeat_ms = now;
}

void WorkerRegistry::CountResults(const std::string& worker_id, int64_t recorded) {
  if (auto w = workers_.find(worker_id); w != workers_.end()) {
    w->second.results_reported += recorded;
  }
}

std::vector<std::string> WorkerRegistry::ExpireSilent(int64_t now) {
  std::vector<std::string> expired;
  for (auto& [id, w] : workers_) {
    if (!w.expired && now - w.last_heartbeat_ms > options_.lease_ttl_ms) {
      w.expired = true;
      spdlog::warn("worker {} silent for {} ms; it must register again", id,
                   now - w.last_heartbeat_ms);
      expired.push_back(id);
    }
  }
  return expired;
}

void WorkerRegistry::ForgetSilent(int64_t now, const LeasesOf& leases_of) {
  // Stamped once, with its last heartbeat; one loaded at this start that
  // has not registered since beat until the start at the latest.
  std::vector<std::pair<Worker*, int64_t>> found_silent;
  std::vector<std::string> forgotten;
  for (auto& [id, w] : workers_) {
    if (!w.expired) continue;
    if (w.row.silent_since_ms == 0) {
      found_silent.emplace_back(&w, w.last_heartbeat_ms > 0 ? w.last_heartbeat_ms : now);
    } else if (now - w.row.silent_since_ms > options_.retention_ms && leases_of(id) == 0) {
      forgotten.push_back(id);
    }
  }
  if (!found_silent.empty()) {
    std::vector<db::WorkerRow> stamped;
    for (const auto& [w, since] : found_silent) {
      stamped.push_back(w->row);
      stamped.back().silent_since_ms = since;
    }
    if (Status stored = StoreUnsynced(stamped); !stored.ok()) {
      spdlog::error("cannot store when workers went silent: {}; retrying", stored.message());
      return;
    }
    for (const auto& [w, since] : found_silent) w->row.silent_since_ms = since;
  }
  if (forgotten.empty()) return;
  // The row stays, marked: deleted, it would take with it the token that
  // owns the id, and any token could then take the id over.
  std::vector<db::WorkerRow> marked;
  for (const std::string& id : forgotten) {
    marked.push_back(workers_[id].row);
    marked.back().forgotten = true;
  }
  if (Status stored = StoreUnsynced(marked); !stored.ok()) {
    spdlog::error("cannot forget silent workers: {}; retrying", stored.message());
    return;
  }
  for (const std::string& id : forgotten) {
    spdlog::info(
        "worker {} forgotten: silent for {} ms with no lease (its results stay; it registers "
        "again under its token if it comes back)",
        id, now - workers_[id].row.silent_since_ms);
    forgotten_[id] = workers_[id].row.owner_token;
    workers_.erase(id);
  }
}

Status WorkerRegistry::StoreUnsynced(const std::vector<db::WorkerRow>& rows) {
  auto txn = db_.Begin(/*fsync=*/false);
  TF_RETURN_IF_ERROR(txn->begin_status());
  for (const db::WorkerRow& row : rows) TF_RETURN_IF_ERROR(db_.PutWorker(row));
  return txn->Commit();
}

}  // namespace tf::coordinator
