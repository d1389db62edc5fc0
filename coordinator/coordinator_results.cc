// Results: each reported result recorded once, whoever reports it.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "common/files.h"
#include "coordinator/coordinator.h"
#include "coordinator/finalists.h"
#include "coordinator/job_rules.h"
#include "kernelspec/config.h"

namespace tf::coordinator {
namespace {

// The builds a worker ran for a lease that ends now (once: a retried report
// finds the lease gone), for the build metrics.
void TellWorkerBuilds(Observer& observer, const v1::ReportResultsRequest& request) {
  for (const v1::WorkerBuild& build : request.builds()) {
    compiler::BuildStats stats;
    stats.configs = build.configs();
    stats.failed_configs = build.failed_configs();
    stats.compiler_runs = build.compiler_runs();
    stats.wall_seconds = build.wall_seconds();
    stats.cpu_seconds = build.cpu_seconds();
    observer.OnBuildFinished(stats, Observer::BuildSite::kWorker);
  }
}

}  // namespace

db::ResultRow Coordinator::MakeResultRow(const Job& job, const Candidate& candidate,
                                         const v1::CandidateResult& result,
                                         const std::string& worker) const {
  db::ResultRow row;
  row.candidate_id = candidate.id;
  row.job_id = job.row.id;
  row.fingerprint = job.row.fingerprint;
  row.config_key = candidate.config_key;
  row.problem_key = candidate.problem_key;
  row.device_class = job.row.device_class;
  row.worker = worker;
  row.status = result.status() == v1::RESULT_STATUS_UNSPECIFIED ? v1::RESULT_STATUS_RUNTIME_FAILED
                                                                : result.status();
  row.error = result.error();
  row.timing = result.timing();
  row.max_abs_error = result.max_abs_error();
  // What the build used: known here when the coordinator built it, else as
  // the worker that built it reports.
  row.resources = job.build_on_worker ? result.resources() : candidate.resources;
  return row;
}

void Coordinator::ApplyResultLocked(Job& job, Candidate& candidate, const db::ResultRow& row,
                                    bool became_best) {
  candidate.state = db::CandidateState::kDone;
  candidate.lease_id = 0;
  observer_->OnResultRecorded(row);
  if (became_best) {
    db::BestRow best;
    best.kernel = job.row.kernel;
    best.fingerprint = row.fingerprint;
    best.fingerprint_created_ms = job.fingerprint_created_ms;
    best.problem_key = row.problem_key;
    best.device_class = row.device_class;
    best.result = row;
    best_.Put(best);
  }
}

// Refuses the whole report when an own_only caller includes a candidate that
// was never leased to the worker it names: a worker reports for its leases
// only, whether or not they have expired since.
Result<v1::ReportResultsResponse> Coordinator::ReportResults(
    const v1::ReportResultsRequest& request, const auth::Caller& caller) {
  std::lock_guard lock(mu_);
  TF_RETURN_IF_ERROR(workers_->CheckOwner(request.worker_id(), caller));
  if (caller.own_only) {
    for (const auto& result : request.results()) {
      auto c = candidates_.find(result.candidate_id());
      if (c == candidates_.end()) continue;  // done and forgotten: a duplicate
      const auto& to = c->second.leased_to;
      if (std::find(to.begin(), to.end(), request.worker_id()) == to.end()) {
        return Status::PermissionDenied("candidate " + std::to_string(result.candidate_id()) +
                                        " was not leased to worker " + request.worker_id());
      }
    }
    auto lease = leases_.find(request.lease_id());
    if (request.lease_finished() && lease != leases_.end() &&
        lease->second.worker_id != request.worker_id()) {
      return Status::PermissionDenied("lease " + std::to_string(request.lease_id()) +
                                      " was not granted to worker " + request.worker_id());
    }
  }
  if (auto lease = leases_.find(request.lease_id());
      lease != leases_.end() && lease->second.retime) {
    return ReportRetimeLocked(request, lease->second);
  }
  v1::ReportResultsResponse response;
  // A result counts once, whoever reports it: also after its lease expired
  // and went to another worker, as long as the candidate has none yet.
  struct Accepted {
    Job* job;
    Candidate* candidate;
    db::ResultRow row;
  };
  std::vector<Accepted> accepted;
  std::map<int64_t, db::JobRow> updated_jobs;
  for (const auto& result : request.results()) {
    auto c = candidates_.find(result.candidate_id());
    Job* job = c == candidates_.end() ? nullptr : &jobs_[c->second.job_id];
    bool already = std::any_of(accepted.begin(), accepted.end(), [&](const Accepted& a) {
      return a.candidate->id == result.candidate_id();
    });
    if (!job || c->second.state == db::CandidateState::kDone || already) {
      response.set_duplicates(response.duplicates() + 1);
      continue;
    }
    if (job->row.state == v1::JOB_STATE_CANCELLED) {
      response.set_job_cancelled(true);
      continue;
    }
    auto [it, inserted] = updated_jobs.emplace(job->row.id, job->row);
    db::JobRow& row = it->second;
    row.candidates_done++;
    if (IsFailure(result.status())) row.candidates_failed++;
    row.updated_ms = NowUnixMs();
    accepted.push_back(
        {job, &c->second, MakeResultRow(*job, c->second, result, request.worker_id())});
  }
  // A finished lease ends in the same transaction as its last results.
  std::optional<Release> release;
  auto finished = request.lease_finished() ? leases_.find(request.lease_id()) : leases_.end();
  if (finished != leases_.end()) {
    std::set<int64_t> reporting;
    for (const auto& a : accepted) reporting.insert(a.candidate->id);
    release = PlanReleaseLocked(finished->second, reporting);
  }
  std::vector<bool> became_best(accepted.size(), false);
  {
    auto txn = db_->Begin();
    TF_RETURN_IF_ERROR(txn->begin_status());
    for (size_t i = 0; i < accepted.size(); ++i) {
      const auto& a = accepted[i];
      TF_ASSIGN_OR_RETURN(bool inserted, db_->InsertResult(a.row));
      if (!inserted) {
        return Status::Internal("candidate " + std::to_string(a.candidate->id) +
                                " already has a result in the database but not in memory");
      }
      TF_RETURN_IF_ERROR(db_->SetCandidateState({a.candidate->id}, db::CandidateState::kDone, 0));
      if (a.row.status == v1::RESULT_STATUS_OK) {
        TF_ASSIGN_OR_RETURN(became_best[i], db_->OfferBest(a.job->row.kernel, a.row, NowUnixMs()));
      }
    }
    for (const auto& [id, row] : updated_jobs) TF_RETURN_IF_ERROR(db_->UpdateJob(row));
    if (release) TF_RETURN_IF_ERROR(StoreReleaseLocked(*release));
    TF_RETURN_IF_ERROR(txn->Commit());
  }
  for (size_t i = 0; i < accepted.size(); ++i) {
    ApplyResultLocked(*accepted[i].job, *accepted[i].candidate, accepted[i].row, became_best[i]);
    TellSearchLocked(*accepted[i].job, *accepted[i].candidate, accepted[i].row);
  }
  for (auto& [id, row] : updated_jobs) jobs_[id].row = std::move(row);
  response.set_recorded(static_cast<int32_t>(accepted.size()));
  workers_->CountResults(request.worker_id(), response.recorded());
  workers_->HeardFrom(request.worker_id(), NowUnixMs());
  if (release) {
    if (auto job = jobs_.find(finished->second.job_id);
        job != jobs_.end() && !finished->second.recovered) {
      job->second.leases_finished++;
      job->second.lease_ms_total += NowUnixMs() - finished->second.granted_ms;
      job->second.lease_candidates_total +=
          static_cast<int64_t>(finished->second.candidate_ids.size());
    }
    ApplyReleaseLocked(*release);
    TellWorkerBuilds(*observer_, request);
  }
  for (auto& [id, row] : updated_jobs) {
    ChangedLocked(jobs_[id]);
    AdvanceSearchLocked(jobs_[id]);
  }
  return response;
}

Result<v1::ReportResultsResponse> Coordinator::ReportRetimeLocked(
    const v1::ReportResultsRequest& request, Lease& lease) {
  v1::ReportResultsResponse response;
  Job& job = jobs_[lease.job_id];
  auto retime = std::find_if(job.retimes.begin(), job.retimes.end(),
                             [&](const auto& r) { return r.second.lease_id == lease.id; });
  if (retime == job.retimes.end()) {
    response.set_duplicates(request.results_size());
    return response;
  }
  std::vector<v1::CandidateResult>& reported = retime->second.reported;
  const std::vector<int64_t>& finalists = retime->second.finalists;
  for (const v1::CandidateResult& result : request.results()) {
    const bool finalist =
        std::find(finalists.begin(), finalists.end(), result.candidate_id()) != finalists.end();
    const bool again = std::any_of(reported.begin(), reported.end(), [&](const auto& r) {
      return r.candidate_id() == result.candidate_id();
    });
    if (!finalist || again) {
      response.set_duplicates(response.duplicates() + 1);
      continue;
    }
    reported.push_back(result);
    response.set_recorded(response.recorded() + 1);
  }
  // Re-timings amend results counted already: results_reported stays the
  // count of the worker's results in the database.
  workers_->HeardFrom(request.worker_id(), NowUnixMs());
  if (!request.lease_finished() && reported.size() < finalists.size()) return response;

  // A finalist that failed now (a crash, another worker's device) keeps its
  // result from the search, without a re-timing.
  const std::optional<int64_t> id = RetimeWinner(reported);
  const v1::CandidateResult* winner = nullptr;
  for (const v1::CandidateResult& r : reported) {
    if (id && r.candidate_id() == *id) winner = &r;
  }
  std::optional<db::BestRow> best;
  if (winner) {
    db::ResultRow row =
        MakeResultRow(job, candidates_[winner->candidate_id()], *winner, request.worker_id());
    row.timing = row.retiming = winner->retiming();
    row.retime_winner = true;
    best = db::BestRow{job.row.kernel,  row.fingerprint,  job.fingerprint_created_ms,
                       row.problem_key, row.device_class, row};
  }
  {
    auto txn = db_->Begin();
    TF_RETURN_IF_ERROR(txn->begin_status());
    for (const v1::CandidateResult& r : reported) {
      if (r.status() != v1::RESULT_STATUS_OK) continue;
      TF_RETURN_IF_ERROR(db_->SetRetiming(r.candidate_id(), r.retiming(), &r == winner));
    }
    if (best) TF_RETURN_IF_ERROR(db_->PutBest(job.row.kernel, best->result, NowUnixMs()));
    TF_RETURN_IF_ERROR(db_->EndLease(lease.id));
    TF_RETURN_IF_ERROR(txn->Commit());
  }
  if (best) best_.Put(*best);
  const std::string problem = kernelspec::ProblemText(job.row.spec.problems(retime->first));
  if (winner) {
    spdlog::info(
        "job {}: problem {}: candidate {} won the re-timing of {} finalists in "
        "alternation, median {:.0f} ns",
        job.row.id, problem, winner->candidate_id(), finalists.size(),
        winner->retiming().median_ns());
  } else {
    spdlog::warn("job {}: problem {}: no finalist was re-timed; its best stays the search's",
                 job.row.id, problem);
  }
  job.retimes.erase(retime);
  ApplyReleaseLocked({lease.id, {}, 0});
  TellWorkerBuilds(*observer_, request);
  ChangedLocked(job);
  FinishIfDoneLocked(job);
  return response;
}

}  // namespace tf::coordinator
