// Job views and job state: what clients read and watch, cancellation, and
// the transitions that end a job.
#include <spdlog/spdlog.h>

#include <chrono>

#include "common/files.h"
#include "coordinator/coordinator.h"
#include "coordinator/finalists.h"
#include "coordinator/job_rules.h"
#include "kernelspec/config.h"

namespace tf::coordinator {
namespace {

Status JobNotFound(int64_t job_id) {
  return Status::NotFound("job " + std::to_string(job_id) + " does not exist");
}

}  // namespace

Status Coordinator::CheckJobOwner(const db::JobRow& row, const auth::Caller& caller) const {
  if (!caller.own_only || row.owner_token == caller.token_id) return Status::Ok();
  return Status::PermissionDenied("job " + std::to_string(row.id) + " belongs to another token");
}

void Coordinator::ChangedLocked(Job& job) {
  job.version++;
  change_cv_.notify_all();
}

void Coordinator::FailJobLocked(Job& job, const std::string& error) {
  db::JobRow updated = job.row;
  updated.state = v1::JOB_STATE_FAILED;
  updated.error = error;
  updated.updated_ms = NowUnixMs();
  Status stored = db_->UpdateJob(updated);
  if (!stored.ok()) {
    spdlog::error("job {}: cannot record failure: {}", job.row.id, stored.message());
    return;
  }
  spdlog::warn("job {} failed: {}", job.row.id, error);
  job.row = std::move(updated);
  job.ready.clear();
  ChangedLocked(job);
}

void Coordinator::ChooseFinalistsLocked(Job& job) {
  job.finalists_chosen = true;
  const int count = job.row.spec.search().finalists();
  if (count < 2) return;
  auto results = db_->ListResults(job.row.id);
  if (!results.ok()) {
    spdlog::error(
        "job {}: cannot read its results to choose finalists: {}; they are not timed "
        "again",
        job.row.id, results.status().message());
    return;
  }
  // Only candidates with an artifact here: not those answered from earlier
  // jobs' results that were built on workers, nor, after a restart, any built
  // on workers.
  std::map<int, std::vector<TimedCandidate>> by_problem;
  for (const db::ResultRow& r : *results) {
    auto c = candidates_.find(r.candidate_id);
    if (r.status != v1::RESULT_STATUS_OK || c == candidates_.end() ||
        c->second.artifact_sha256.empty()) {
      continue;
    }
    by_problem[c->second.problem_index].push_back({r.candidate_id, r.timing.median_ns()});
  }
  for (auto& [problem, timed] : by_problem) {
    std::vector<int64_t> finalists = PickFinalists(std::move(timed), count);
    if (!finalists.empty()) job.retimes[problem].finalists = std::move(finalists);
  }
  if (job.retimes.empty()) return;
  spdlog::info("job {}: search done; re-timing the finalists of {} problems in alternation",
               job.row.id, job.retimes.size());
  work_cv_.notify_all();
  ChangedLocked(job);
}

// Forgets the ended job's candidates (they live on in the database).
void Coordinator::FinishIfDoneLocked(Job& job) {
  if (job.row.state != v1::JOB_STATE_RUNNING ||
      job.row.candidates_done < job.row.candidates_total || (job.search && !job.search->Done())) {
    return;
  }
  if (!job.finalists_chosen) ChooseFinalistsLocked(job);
  if (!job.retimes.empty()) return;
  db::JobRow updated = job.row;
  if (job.search) updated.stop_reason = job.search->StopReason();
  bool any_ok = updated.candidates_failed < updated.candidates_total;
  updated.state = any_ok ? v1::JOB_STATE_SUCCEEDED : v1::JOB_STATE_FAILED;
  if (!any_ok) {
    updated.error =
        updated.candidates_total == 0
            ? "the constraints leave no configuration to run"
            : "no candidate succeeded (see `tunefleet results " + std::to_string(job.row.id) + "`)";
  }
  updated.updated_ms = NowUnixMs();
  Status stored = db_->UpdateJob(updated);
  if (!stored.ok()) {
    spdlog::error("job {}: cannot record its end: {}", job.row.id, stored.message());
    return;
  }
  job.row = std::move(updated);
  if (job.row.state == v1::JOB_STATE_SUCCEEDED) {
    best_.Complete({job.row.kernel, job.row.fingerprint, job.fingerprint_created_ms,
                    job.row.device_class, job.row.updated_ms});
  }
  spdlog::info("job {} {}: {} candidates, {} failed, {} reused; {}", job.row.id,
               job.row.state == v1::JOB_STATE_SUCCEEDED ? "succeeded" : "failed",
               job.row.candidates_total, job.row.candidates_failed, job.row.candidates_cached,
               job.row.stop_reason);
  for (int64_t id : job.candidate_ids) candidates_.erase(id);
  job.candidate_ids.clear();
  job.ready.clear();
  job.search.reset();
  ChangedLocked(job);
}

v1::Job Coordinator::ToProto(const db::JobRow& row) {
  v1::Job job;
  job.set_job_id(row.id);
  job.set_kernel(row.kernel);
  job.set_state(row.state);
  job.set_fingerprint(row.fingerprint);
  job.set_device_class(row.device_class);
  job.set_toolchain(row.toolchain);
  job.set_candidates_total(row.candidates_total);
  job.set_candidates_done(row.candidates_done);
  job.set_candidates_failed(row.candidates_failed);
  job.set_candidates_cached(row.candidates_cached);
  job.set_created_unix_ms(row.created_ms);
  job.set_updated_unix_ms(row.updated_ms);
  job.set_error(row.error);
  job.set_stop_reason(row.stop_reason);
  job.set_priority(row.priority);
  job.set_configurations(row.configurations);
  job.set_builds_done(row.builds_done);
  auto best = db_->JobBest(row.id);
  if (best.ok()) {
    for (const auto& r : *best) {
      auto* entry = job.add_best();
      auto problem = kernelspec::ParseProblem(r.problem_text);
      auto config = kernelspec::ParseConfigKey(r.config_key);
      if (problem.ok()) *entry->mutable_problem() = *problem;
      if (config.ok()) *entry->mutable_config() = *config;
      *entry->mutable_timing() = db::AnsweringTiming(r);
      entry->set_confirmed_by_retiming(r.retime_winner);
      entry->set_candidate_id(r.candidate_id);
    }
    if (IsTerminal(row.state)) {
      std::set<std::string> succeeded;
      for (const auto& entry : job.best())
        succeeded.insert(kernelspec::ProblemKey(entry.problem()));
      for (const auto& problem : row.spec.problems()) {
        if (!succeeded.contains(kernelspec::ProblemKey(problem))) {
          *job.add_problems_without_success() = problem;
        }
      }
    }
  }
  return job;
}

v1::Job Coordinator::ToProto(const Job& job) {
  v1::Job proto = ToProto(job.row);
  proto.set_problems_retiming(static_cast<int32_t>(job.retimes.size()));
  if (job.row.state == v1::JOB_STATE_QUEUED ||
      (job.row.state == v1::JOB_STATE_RUNNING && job.stranded && LiveDevicesLocked(job) == 0)) {
    proto.set_waiting_for(WaitingForLocked(job));
  }
  return proto;
}

Result<v1::Job> Coordinator::GetJob(int64_t job_id, const auth::Caller& caller) {
  std::lock_guard lock(mu_);
  auto it = jobs_.find(job_id);
  if (it != jobs_.end()) {
    TF_RETURN_IF_ERROR(CheckJobOwner(it->second.row, caller));
    return ToProto(it->second);
  }
  TF_ASSIGN_OR_RETURN(auto row, db_->GetJob(job_id));
  if (!row) return JobNotFound(job_id);
  TF_RETURN_IF_ERROR(CheckJobOwner(*row, caller));
  return ToProto(*row);
}

Status Coordinator::WatchJob(int64_t job_id, const std::function<bool(const v1::Job&)>& on_change,
                             const std::function<bool()>& cancelled, const auth::Caller& caller) {
  if (caller.own_only) TF_RETURN_IF_ERROR(GetJob(job_id, caller).status());
  uint64_t seen = ~uint64_t{0};
  while (!stopping_) {
    if (cancelled()) return Status::Ok();
    v1::Job snapshot;
    {
      std::unique_lock lock(mu_);
      auto it = jobs_.find(job_id);
      if (it == jobs_.end()) break;  // finished before this coordinator started
      change_cv_.wait_for(lock, std::chrono::milliseconds(500),
                          [&] { return stopping_ || it->second.version != seen; });
      if (it->second.version == seen) continue;
      seen = it->second.version;
      snapshot = ToProto(it->second);
    }
    if (!on_change(snapshot) || IsTerminal(snapshot.state())) return Status::Ok();
  }
  // Stopping, or the job ended before this coordinator started: its state
  // from the database.
  TF_ASSIGN_OR_RETURN(auto job, GetJob(job_id));
  on_change(job);
  return Status::Ok();
}

Result<v1::Job> Coordinator::Cancel(int64_t job_id, const auth::Caller& caller) {
  std::lock_guard lock(mu_);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) {
    TF_ASSIGN_OR_RETURN(auto row, db_->GetJob(job_id));
    if (!row) return JobNotFound(job_id);
    TF_RETURN_IF_ERROR(CheckJobOwner(*row, caller));
    return ToProto(*row);  // already ended: nothing to cancel
  }
  Job& job = it->second;
  TF_RETURN_IF_ERROR(CheckJobOwner(job.row, caller));
  if (IsTerminal(job.row.state)) return ToProto(job);
  db::JobRow updated = job.row;
  updated.state = v1::JOB_STATE_CANCELLED;
  updated.updated_ms = NowUnixMs();
  std::vector<int64_t> job_leases;
  for (const auto& [id, lease] : leases_) {
    if (lease.job_id == job_id) job_leases.push_back(id);
  }
  {
    auto txn = db_->Begin();
    TF_RETURN_IF_ERROR(txn->begin_status());
    TF_RETURN_IF_ERROR(db_->UpdateJob(updated));
    for (int64_t id : job_leases) TF_RETURN_IF_ERROR(db_->EndLease(id));
    TF_RETURN_IF_ERROR(txn->Commit());
  }
  job.row = std::move(updated);
  for (int64_t id : job_leases) {
    leases_.erase(id);
    observer_->OnLeaseEnded(id);
  }
  for (int64_t id : job.candidate_ids) candidates_.erase(id);
  job.candidate_ids.clear();
  job.ready.clear();
  job.active_leases = 0;
  job.search.reset();
  job.retimes.clear();
  builds_->CancelJob(job_id);
  spdlog::info("job {} cancelled", job_id);
  ChangedLocked(job);
  return ToProto(job);
}

Result<std::vector<v1::Job>> Coordinator::ListJobs(int limit, const auth::Caller& caller) {
  std::lock_guard lock(mu_);
  TF_ASSIGN_OR_RETURN(
      auto rows, db_->LoadJobs(false, limit > 0 ? limit : 100,
                               caller.own_only ? std::optional(caller.token_id) : std::nullopt));
  std::vector<v1::Job> jobs;
  for (const auto& row : rows) {
    auto it = jobs_.find(row.id);
    jobs.push_back(it != jobs_.end() ? ToProto(it->second) : ToProto(row));
  }
  return jobs;
}

Result<std::vector<v1::CandidateResult>> Coordinator::ListResults(int64_t job_id,
                                                                  const auth::Caller& caller) {
  TF_ASSIGN_OR_RETURN(auto recorded, ListRecordedResults(job_id, caller));
  std::vector<v1::CandidateResult> results;
  results.reserve(recorded.size());
  for (auto& r : recorded) results.push_back(std::move(r.result));
  return results;
}

Result<std::vector<Coordinator::RecordedResult>> Coordinator::ListRecordedResults(
    int64_t job_id, const auth::Caller& caller, int64_t since_ms) {
  std::lock_guard lock(mu_);
  TF_ASSIGN_OR_RETURN(auto job, db_->GetJob(job_id));
  if (!job) return JobNotFound(job_id);
  TF_RETURN_IF_ERROR(CheckJobOwner(*job, caller));
  TF_ASSIGN_OR_RETURN(auto rows, db_->ListResults(job_id, since_ms));
  std::vector<RecordedResult> results;
  for (const auto& r : rows) {
    v1::CandidateResult out;
    out.set_candidate_id(r.candidate_id);
    out.set_status(r.status);
    out.set_error(r.error);
    *out.mutable_timing() = r.timing;
    out.set_max_abs_error(r.max_abs_error);
    *out.mutable_resources() = r.resources;
    if (r.retiming.repeats() > 0) *out.mutable_retiming() = r.retiming;
    out.set_retime_winner(r.retime_winner);
    auto config = kernelspec::ParseConfigKey(r.config_key);
    auto problem = kernelspec::ParseProblem(r.problem_text);
    if (config.ok()) *out.mutable_config() = *config;
    if (problem.ok()) *out.mutable_problem() = *problem;
    out.set_device_class(r.device_class);
    out.set_worker(r.cached ? "(reused)" : r.worker);
    results.push_back({std::move(out), r.created_ms});
  }
  return results;
}

v1::QueryBestResponse Coordinator::QueryBest(const v1::QueryBestRequest& request) const {
  return best_.Query(request);
}

Activity Coordinator::CurrentActivity() {
  std::lock_guard lock(mu_);
  Activity activity;
  for (const auto& [id, lease] : leases_) {
    auto job = jobs_.find(lease.job_id);
    const bool known = job != jobs_.end();
    activity.leases.push_back({id, lease.job_id, known ? job->second.row.owner_token : 0,
                               known ? job->second.row.kernel : "", lease.worker_id,
                               lease.device_index, static_cast<int64_t>(lease.candidate_ids.size()),
                               lease.granted_ms, lease.backup_of != 0});
  }
  for (const auto& [id, c] : candidates_) {
    if (c.state == db::CandidateState::kReady) activity.candidates_ready++;
    if (c.state == db::CandidateState::kWaitingBuild) activity.candidates_waiting_build++;
  }
  for (const auto& [id, job] : jobs_) activity.jobs[job.row.state]++;
  return activity;
}

}  // namespace tf::coordinator
