// Leases: candidates handed to devices, backups for stragglers, releases,
// and the reaper that takes leases back from silent workers.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <set>

#include "common/files.h"
#include "coordinator/coordinator.h"
#include "kernelspec/config.h"

namespace tf::coordinator {

// Highest priority first; among equals the job with the fewest leases out,
// then the one served least recently: same-priority jobs share the workers
// (round robin when leases are taken one at a time). A job has work when
// candidates are ready or finalists wait to be timed again.
Coordinator::Job* Coordinator::PickJobLocked(const v1::DeviceInfo& device) {
  Job* pick = nullptr;
  for (auto& [id, job] : jobs_) {
    if (job.row.state != v1::JOB_STATE_RUNNING || !ServesJob(device, job)) continue;
    // A candidate reported under an expired lease may still be queued; the
    // front must be ready, the rest is checked when leased.
    while (!job.ready.empty() &&
           candidates_[job.ready.front()].state != db::CandidateState::kReady) {
      job.ready.pop_front();
    }
    const bool retime_waiting = std::any_of(job.retimes.begin(), job.retimes.end(),
                                            [](const auto& r) { return r.second.lease_id == 0; });
    if (job.ready.empty() && !retime_waiting) continue;
    auto rank = [](const Job& j) {
      return std::make_tuple(-j.row.priority, j.active_leases, j.last_lease_seq);
    };
    if (!pick || rank(job) < rank(*pick)) pick = &job;
  }
  return pick;
}

Result<v1::AcquireLeaseResponse> Coordinator::AcquireLease(const v1::AcquireLeaseRequest& request,
                                                           const auth::Caller& caller,
                                                           const std::function<bool()>& abandoned) {
  const auto called = std::chrono::steady_clock::now();
  const auto deadline =
      called + std::chrono::milliseconds(std::clamp<int64_t>(request.wait_ms(), 0, 30000));
  auto respond = [&](v1::Lease lease) {
    observer_->OnLeaseStarted(lease.lease_id(), request.worker_id(), request.device_index());
    observer_->OnLeaseAcquired(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::steady_clock::now() - called)
                                   .count());
    v1::AcquireLeaseResponse response;
    *response.mutable_lease() = std::move(lease);
    return response;
  };
  int max_candidates = request.max_candidates() > 0
                           ? std::min(request.max_candidates(), options_.max_lease_candidates)
                           : options_.max_lease_candidates;
  std::unique_lock lock(mu_);
  TF_RETURN_IF_ERROR(workers_->CheckOwner(request.worker_id(), caller));
  while (true) {
    if (abandoned && abandoned()) return v1::AcquireLeaseResponse();
    const v1::DeviceInfo* device =
        workers_->FindDevice(request.worker_id(), request.device_index());
    if (!device) {
      return Status::NotFound("worker " + request.worker_id() + " has no registered device " +
                              std::to_string(request.device_index()) + "; register again");
    }
    workers_->HeardFrom(request.worker_id(), NowUnixMs());
    BindQueuedJobsLocked(request.worker_id());  // a job may have waited for a device like this
    if (Job* job = PickJobLocked(*device)) {
      TF_ASSIGN_OR_RETURN(
          auto lease,
          job->ready.empty()
              ? GrantRetimeLeaseLocked(*job, request.worker_id(), request.device_index())
              : GrantLeaseLocked(*job, request.worker_id(), request.device_index(),
                                 max_candidates));
      return respond(std::move(lease));
    }
    if (Lease* straggler = PickStragglerLocked(*device, request.worker_id())) {
      TF_ASSIGN_OR_RETURN(
          auto lease,
          straggler->retime
              ? TakeOverRetimeLocked(*straggler, request.worker_id(), request.device_index())
              : GrantBackupLeaseLocked(*straggler, request.worker_id(), request.device_index()));
      return respond(std::move(lease));
    }
    if (stopping_ || work_cv_.wait_until(lock, deadline) == std::cv_status::timeout) {
      return v1::AcquireLeaseResponse();
    }
  }
}

Result<v1::Lease> Coordinator::GrantLeaseLocked(Job& job, const std::string& worker_id,
                                                int device_index, int max_candidates) {
  // One artifact per lease: the first ready candidate's, and the others
  // built into the same artifact, so a worker loads one library.
  // Only as far into the queue as it takes: it may hold a whole job.
  const std::string artifact = candidates_[job.ready.front()].artifact_sha256;
  std::vector<int64_t> picked, skipped;
  size_t scanned = 0;
  for (; scanned < job.ready.size() && static_cast<int>(picked.size()) < max_candidates;
       ++scanned) {
    const Candidate& c = candidates_[job.ready[scanned]];
    if (c.state != db::CandidateState::kReady) continue;
    (c.artifact_sha256 == artifact ? picked : skipped).push_back(c.id);
  }
  db::LeaseRow row{0, job.row.id, worker_id, device_index, artifact, picked};
  {
    // Not fsynced: a lease forgotten in a power loss only runs its
    // candidates again, and a result still counts once.
    auto txn = db_->Begin(/*fsync=*/false);
    TF_RETURN_IF_ERROR(txn->begin_status());
    TF_RETURN_IF_ERROR(db_->InsertLease(row));
    TF_RETURN_IF_ERROR(db_->SetCandidateState(picked, db::CandidateState::kLeased, row.id));
    TF_RETURN_IF_ERROR(txn->Commit());
  }
  job.ready.erase(job.ready.begin(), job.ready.begin() + static_cast<ptrdiff_t>(scanned));
  job.ready.insert(job.ready.begin(), skipped.begin(), skipped.end());
  int64_t now = NowUnixMs();
  Lease lease{
      row.id, job.row.id, worker_id, device_index, artifact, picked, now + options_.lease_ttl_ms,
      now};
  job.active_leases++;
  job.last_lease_seq = ++lease_seq_;
  for (int64_t id : picked) {
    Candidate& c = candidates_[id];
    c.state = db::CandidateState::kLeased;
    c.lease_id = lease.id;
    c.leased_to.push_back(worker_id);
  }
  Lease& stored = leases_[lease.id] = std::move(lease);
  return LeaseProtoLocked(job, stored);
}

Result<v1::Lease> Coordinator::GrantRetimeLeaseLocked(Job& job, const std::string& worker_id,
                                                      int device_index) {
  auto waiting = std::find_if(job.retimes.begin(), job.retimes.end(),
                              [](const auto& r) { return r.second.lease_id == 0; });
  Job::Retime& retime = waiting->second;
  const std::string artifact = candidates_[retime.finalists.front()].artifact_sha256;
  // Its row only numbers it: the finalists stay done, and a coordinator
  // that restarts chooses them again.
  db::LeaseRow row{0, job.row.id, worker_id, device_index, artifact, {}};
  TF_RETURN_IF_ERROR(db_->InsertLease(row));
  const int64_t now = NowUnixMs();
  Lease lease{row.id,
              job.row.id,
              worker_id,
              device_index,
              artifact,
              retime.finalists,
              now + options_.lease_ttl_ms,
              now};
  lease.retime = true;
  retime.lease_id = lease.id;
  retime.reported.clear();
  job.active_leases++;
  job.last_lease_seq = ++lease_seq_;
  for (int64_t id : retime.finalists) candidates_[id].leased_to.push_back(worker_id);
  spdlog::info("job {}: lease {} re-times the {} finalists of problem {} on worker {} device {}",
               job.row.id, lease.id, retime.finalists.size(),
               kernelspec::ProblemText(job.row.spec.problems(waiting->first)), worker_id,
               device_index);
  Lease& stored = leases_[lease.id] = std::move(lease);
  return LeaseProtoLocked(job, stored);
}

v1::Lease Coordinator::LeaseProtoLocked(const Job& job, const Lease& lease) {
  v1::Lease proto;
  proto.set_lease_id(lease.id);
  proto.set_job_id(job.row.id);
  *proto.mutable_spec() = job.row.spec;
  proto.set_artifact_sha256(lease.artifact_sha256);
  std::error_code size_error;
  auto size = std::filesystem::file_size(store_->PathOf(lease.artifact_sha256), size_error);
  proto.set_artifact_size(size_error ? 0 : static_cast<int64_t>(size));
  proto.set_reference_symbol(candidates_[lease.candidate_ids.front()].reference_symbol);
  proto.set_deadline_unix_ms(lease.deadline_ms);
  proto.set_build_on_worker(job.build_on_worker);
  proto.set_retime(lease.retime);
  for (int64_t id : lease.candidate_ids) {
    const Candidate& c = candidates_[id];
    auto* lc = proto.add_candidates();
    lc->set_candidate_id(id);
    *lc->mutable_config() = c.config;
    *lc->mutable_problem() = c.problem;
    lc->set_symbol(c.symbol);
    if (lease.retime) {
      lc->set_artifact_sha256(c.artifact_sha256);
      continue;  // timed in full, in alternation
    }
    const double early_stop = job.row.spec.search().early_stop();
    std::optional<double> best = job.search ? job.search->Best(c.problem_index) : std::nullopt;
    if (early_stop > 0 && best) lc->set_early_stop_ns(early_stop * *best);
  }
  return proto;
}

std::vector<Coordinator::Candidate*> Coordinator::UnreportedLocked(const Lease& lease) {
  std::vector<Candidate*> unreported;
  for (int64_t id : lease.candidate_ids) {
    auto c = candidates_.find(id);
    if (c != candidates_.end() && c->second.state == db::CandidateState::kLeased &&
        c->second.lease_id == lease.id) {
      unreported.push_back(&c->second);
    }
  }
  return unreported;
}

bool Coordinator::AllReportedLocked(const Lease& lease) const {
  return std::none_of(lease.candidate_ids.begin(), lease.candidate_ids.end(), [&](int64_t id) {
    auto c = candidates_.find(id);
    return c != candidates_.end() && c->second.state != db::CandidateState::kDone;
  });
}

// A re-timing gives each finalist about five candidates' time
// (runner/alternation.h's kAlternationTimeFactor).
constexpr int64_t kRetimeCandidateTimes = 5;

Coordinator::Lease* Coordinator::PickStragglerLocked(const v1::DeviceInfo& device,
                                                     const std::string& worker_id) {
  int64_t now = NowUnixMs();
  Lease* pick = nullptr;
  for (auto& [id, lease] : leases_) {
    if (lease.backup_of != 0 || lease.backup_id != 0 || lease.worker_id == worker_id) continue;
    auto job = jobs_.find(lease.job_id);
    if (job == jobs_.end() || job->second.row.state != v1::JOB_STATE_RUNNING ||
        !ServesJob(device, job->second) || job->second.leases_finished < 2) {
      continue;
    }
    // Three times the usual, and never sooner than a heartbeat: a lease of
    // a healthy worker is rarely backed up, a stuck one soon.
    const Job& j = job->second;
    int64_t usual = j.lease_ms_total / j.leases_finished;
    Job::Retime* retime = lease.retime ? RetimeOfLocked(lease) : nullptr;
    if (lease.retime && !retime) continue;  // its re-timing is over
    if (retime) {
      usual =
          std::max(usual, kRetimeCandidateTimes * static_cast<int64_t>(lease.candidate_ids.size()) *
                              j.lease_ms_total / std::max<int64_t>(1, j.lease_candidates_total));
    }
    int64_t allowed = std::max(3 * usual, options_.heartbeat_interval_ms);
    if (retime) allowed <<= std::min(retime->takeovers, 20);
    if (now - lease.granted_ms < allowed) continue;
    if (!lease.retime && UnreportedLocked(lease).empty()) continue;
    if (!pick || lease.granted_ms < pick->granted_ms) pick = &lease;
  }
  return pick;
}

Coordinator::Job::Retime* Coordinator::RetimeOfLocked(const Lease& lease) {
  auto job = jobs_.find(lease.job_id);
  if (job == jobs_.end()) return nullptr;
  for (auto& [problem, retime] : job->second.retimes) {
    if (retime.lease_id == lease.id) return &retime;
  }
  return nullptr;
}

Result<v1::Lease> Coordinator::TakeOverRetimeLocked(Lease& straggler, const std::string& worker_id,
                                                    int device_index) {
  Job& job = jobs_[straggler.job_id];
  spdlog::warn(
      "retime lease {} of worker {} is straggling ({} ms); it ends, and its finalists go "
      "to worker {}",
      straggler.id, straggler.worker_id, NowUnixMs() - straggler.granted_ms, worker_id);
  Job::Retime* retime = RetimeOfLocked(straggler);
  retime->lease_id = 0;  // waiting again: the next grant takes it
  retime->takeovers++;
  TF_RETURN_IF_ERROR(ReleaseLeaseLocked(straggler.id));
  return GrantRetimeLeaseLocked(job, worker_id, device_index);
}

Result<v1::Lease> Coordinator::GrantBackupLeaseLocked(Lease& straggler,
                                                      const std::string& worker_id,
                                                      int device_index) {
  Job& job = jobs_[straggler.job_id];
  std::vector<int64_t> ids;
  for (Candidate* c : UnreportedLocked(straggler)) {
    ids.push_back(c->id);
    c->leased_to.push_back(worker_id);
  }
  // The candidates stay leased to the straggler, whose results still count.
  db::LeaseRow row{0, job.row.id, worker_id, device_index, straggler.artifact_sha256, ids};
  TF_RETURN_IF_ERROR(db_->InsertLease(row));
  int64_t now = NowUnixMs();
  Lease backup{row.id,
               job.row.id,
               worker_id,
               device_index,
               straggler.artifact_sha256,
               ids,
               now + options_.lease_ttl_ms,
               now,
               straggler.id};
  straggler.backup_id = backup.id;
  job.active_leases++;
  spdlog::warn(
      "lease {} of worker {} is straggling ({} ms); its {} unreported candidates also "
      "go to worker {} as lease {}",
      straggler.id, straggler.worker_id, now - straggler.granted_ms, ids.size(), worker_id,
      backup.id);
  Lease& stored = leases_[backup.id] = std::move(backup);
  return LeaseProtoLocked(job, stored);
}

Coordinator::Release Coordinator::PlanReleaseLocked(const Lease& lease,
                                                    const std::set<int64_t>& reporting) {
  Release release{lease.id, {}, 0};
  for (Candidate* c : UnreportedLocked(lease)) {
    if (!reporting.contains(c->id)) release.unreported.push_back(c);
  }
  if (leases_.contains(lease.backup_id)) release.heir = lease.backup_id;
  return release;
}

Status Coordinator::StoreReleaseLocked(const Release& release) {
  std::vector<int64_t> ids;
  for (const Candidate* c : release.unreported) ids.push_back(c->id);
  TF_RETURN_IF_ERROR(db_->SetCandidateState(
      ids, release.heir ? db::CandidateState::kLeased : db::CandidateState::kReady, release.heir));
  return db_->EndLease(release.lease_id);
}

void Coordinator::ApplyReleaseLocked(const Release& release) {
  auto l = leases_.find(release.lease_id);
  if (l == leases_.end()) return;
  const Lease& lease = l->second;
  if (auto original = leases_.find(lease.backup_of); original != leases_.end()) {
    original->second.backup_id = 0;  // it may be backed up again
  }
  if (release.heir) leases_[release.heir].backup_of = 0;  // the backup now owns them alone
  auto job = jobs_.find(lease.job_id);
  if (job != jobs_.end()) {
    job->second.active_leases = std::max(0, job->second.active_leases - 1);
    for (auto& [problem, retime] : job->second.retimes) {
      if (retime.lease_id != lease.id) continue;
      spdlog::warn(
          "lease {} of worker {} ended before re-timing its finalists; they go to the "
          "next worker",
          lease.id, lease.worker_id);
      retime.lease_id = 0;
      work_cv_.notify_all();
    }
    // Back at the front: these are the oldest work of the job.
    for (auto it = release.unreported.rbegin(); it != release.unreported.rend(); ++it) {
      (*it)->lease_id = release.heir;
      if (release.heir) continue;
      (*it)->state = db::CandidateState::kReady;
      job->second.ready.push_front((*it)->id);
    }
  }
  if (!release.unreported.empty()) {
    if (release.heir) {
      spdlog::warn(
          "lease {} of worker {} ended with {} candidates unreported; its backup lease "
          "{} keeps them",
          lease.id, lease.worker_id, release.unreported.size(), release.heir);
    } else {
      spdlog::warn(
          "lease {} of worker {} ended with {} candidates unreported; they go to the next "
          "worker",
          lease.id, lease.worker_id, release.unreported.size());
      work_cv_.notify_all();
    }
  }
  observer_->OnLeaseEnded(l->first);
  leases_.erase(l);
}

Status Coordinator::ReleaseLeaseLocked(int64_t lease_id) {
  auto l = leases_.find(lease_id);
  if (l == leases_.end()) return Status::Ok();
  Release release = PlanReleaseLocked(l->second, {});
  {
    // Not fsynced: forgotten in a power loss, the lease expires again.
    auto txn = db_->Begin(/*fsync=*/false);
    TF_RETURN_IF_ERROR(txn->begin_status());
    TF_RETURN_IF_ERROR(StoreReleaseLocked(release));
    TF_RETURN_IF_ERROR(txn->Commit());
  }
  ApplyReleaseLocked(release);
  return Status::Ok();
}

void Coordinator::ReaperLoop() {
  while (!stopping_) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::lock_guard lock(mu_);
    int64_t now = NowUnixMs();
    std::vector<int64_t> expired;
    for (const auto& [id, lease] : leases_) {
      if (lease.deadline_ms < now) expired.push_back(id);
    }
    for (int64_t id : expired) {
      spdlog::warn("lease {} of worker {} expired", id, leases_[id].worker_id);
      Status released = ReleaseLeaseLocked(id);
      if (!released.ok()) spdlog::error("lease {}: {}", id, released.message());
    }
    // Writes that failed (a full disk, say) and that nobody else retries.
    std::erase_if(unrecorded_builds_, [&](const auto& entry) {
      return RecordBuildsLocked(entry.first, entry.second).ok();
    });
    for (auto& [id, job] : jobs_) AdvanceSearchLocked(job);  // search.max_seconds
    if (!workers_->ExpireSilent(now).empty()) FleetChangedLocked();
    StrandedChangedLocked();  // workers go silent without a call: only the reaper sees it
    workers_->ForgetSilent(now, [this](const std::string& id) { return LeasesOfLocked(id); });
  }
}

}  // namespace tf::coordinator
