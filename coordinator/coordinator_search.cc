// Search: each bound job's strategies asked for configurations as devices
// free up (coordinator/search_driver.h), and told every result.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "common/files.h"
#include "coordinator/coordinator.h"
#include "coordinator/job_rules.h"
#include "kernelspec/config.h"

namespace tf::coordinator {

bool Coordinator::ServesJob(const v1::DeviceInfo& device, const Job& job) {
  if (device.device_class() != job.row.device_class) return false;
  if (job.row.toolchain.empty()) return true;
  auto compiler = device.toolchains().find(job.row.spec.language());
  return compiler != device.toolchains().end() && compiler->second == job.row.toolchain;
}

size_t Coordinator::LiveDevicesLocked(const Job& job) const {
  const int64_t now = NowUnixMs();
  size_t count = 0;
  for (const auto& [id, worker] : workers_->workers()) {
    if (worker.expired || !workers_->Alive(worker, now)) continue;
    for (const auto& d : worker.row.devices) count += ServesJob(d, job);
  }
  return count;
}

void Coordinator::AdvanceSearchLocked(Job& job) {
  // Until the search waits for results: proposals whose results were known
  // at once (reused, pruned, failed builds) make room for more.
  while (job.row.state == v1::JOB_STATE_RUNNING && job.search) {
    if (job.unstored.empty()) {
      // Enough in flight to keep every device busy and, when this coordinator
      // builds, every compiler run too (half a window is asked at a time).
      size_t window = kProposalsPerDevice * std::max<size_t>(1, LiveDevicesLocked(job));
      if (!job.build_on_worker) window = std::max(window, 2 * build_runs_);
      for (auto& p : job.search->Ask(window, NowUnixMs())) {
        job.unstored.push_back({p.problem, std::move(p.config), std::nullopt});
      }
      if (job.unstored.empty()) break;
    }
    if (Status added = AddCandidatesLocked(job, job.unstored); !added.ok()) {
      spdlog::error("job {}: cannot store proposed candidates: {}; retrying", job.row.id,
                    added.message());
      return;  // the reaper tries again
    }
    job.unstored.clear();
  }
  FinishIfDoneLocked(job);
}

void Coordinator::TellSearchLocked(Job& job, const Candidate& candidate, const db::ResultRow& row) {
  if (!job.search) return;
  std::optional<double> time;
  // An early-stopped candidate's estimate is a time, if a rough one.
  if (!IsFailure(row.status)) time = row.timing.median_ns();
  const std::optional<double> best = job.search->Best(candidate.problem_index);
  if (!job.search->Tell(candidate.problem_index, candidate.config, time) || !time ||
      (best && *time >= *best)) {
    return;
  }
  // A new best: offered to the kernel's other jobs searching the same problem
  // (on other device classes) at the same time, as the job's own problems are.
  for (auto& [id, other] : jobs_) {
    if (&other == &job || !other.search || other.row.state != v1::JOB_STATE_RUNNING ||
        other.row.spec.name() != job.row.spec.name()) {
      continue;
    }
    auto problem = other.problem_index.find(candidate.problem_key);
    if (problem != other.problem_index.end())
      other.search->Offer(problem->second, candidate.config);
  }
}

// New candidates of a bound job: stored with the results already known
// (earlier ones, compile failures, pruned builds) in one transaction, then
// queued when built or sent to be built.
Status Coordinator::AddCandidatesLocked(Job& job, const std::vector<NewCandidate>& news) {
  if (news.empty()) return Status::Ok();
  const auto& spec = job.row.spec;
  TF_ASSIGN_OR_RETURN(auto builds, LoadBuildsLocked(job));
  db::JobRow updated = job.row;
  updated.updated_ms = NowUnixMs();
  std::vector<db::CandidateRow> rows;
  std::vector<Candidate> candidates;
  std::vector<std::optional<db::ResultRow>> results;
  std::vector<bool> built_flags;
  for (const auto& n : news) {
    Candidate c;
    c.job_id = job.row.id;
    c.problem_index = n.problem;
    c.config = n.config;
    c.config_key = kernelspec::ConfigKey(c.config);
    c.problem = spec.problems(n.problem);
    c.problem_key = kernelspec::ProblemKey(c.problem);
    auto build = builds.find(c.config_key);
    bool built =
        build != builds.end() && build->second.ok && store_->Has(build->second.artifact_sha256);
    std::optional<db::ResultRow> result = n.earlier;
    if (result && built) {
      // Not run again, but it can be re-timed among the finalists.
      c.artifact_sha256 = build->second.artifact_sha256;
      c.symbol = build->second.symbol;
      c.reference_symbol = build->second.reference_symbol;
    } else if (!result && built) {
      result = UseBuildLocked(job, c, build->second);
    } else if (!result && build != builds.end() && !build->second.ok &&
               job.config_keys.contains(c.config_key) && !job.building.contains(c.config_key)) {
      // Failed for another problem of this job; an earlier job's failure is
      // built again, in case it was the machine's (a time limit under load).
      v1::CandidateResult compile_failed;
      compile_failed.set_status(v1::RESULT_STATUS_COMPILE_FAILED);
      compile_failed.set_error(build->second.diagnostics);
      result = MakeResultRow(job, c, compile_failed, "");
    }
    c.state = result  ? db::CandidateState::kDone
              : built ? db::CandidateState::kReady
                      : db::CandidateState::kWaitingBuild;
    built_flags.push_back(built);
    rows.push_back({0, job.row.id, c.config_key, kernelspec::ProblemText(c.problem), c.state, 0});
    candidates.push_back(std::move(c));
    results.push_back(std::move(result));
  }
  {
    auto txn = db_->Begin();
    TF_RETURN_IF_ERROR(txn->begin_status());
    TF_RETURN_IF_ERROR(db_->InsertCandidates(rows));
    for (size_t i = 0; i < rows.size(); ++i) {
      candidates[i].id = rows[i].id;
      updated.candidates_total++;
      if (!results[i]) continue;
      db::ResultRow& r = *results[i];
      r.candidate_id = rows[i].id;
      r.job_id = job.row.id;
      TF_RETURN_IF_ERROR(db_->InsertResult(r).status());
      updated.candidates_done++;
      if (r.cached) updated.candidates_cached++;
      if (IsFailure(r.status)) updated.candidates_failed++;
    }
    TF_RETURN_IF_ERROR(db_->UpdateJob(updated));
    TF_RETURN_IF_ERROR(txn->Commit());
  }
  job.row = std::move(updated);
  for (const auto& r : results) {
    if (r) observer_->OnResultRecorded(*r);
  }
  std::vector<v1::Config> to_build;
  for (size_t i = 0; i < candidates.size(); ++i) {
    Candidate& c = candidates[i];
    job.candidate_ids.push_back(c.id);
    if (job.config_keys.insert(c.config_key).second) {
      job.row.configurations++;
      if (built_flags[i]) job.row.builds_done++;
    }
    Candidate& stored = candidates_[c.id] = std::move(c);
    if (results[i]) {
      TellSearchLocked(job, stored, *results[i]);
    } else if (stored.state == db::CandidateState::kReady) {
      stored.state = db::CandidateState::kWaitingBuild;  // MarkReadyLocked sets it
      MarkReadyLocked(job, stored);
    } else if (auto bundle = job.worker_bundles.find(stored.config_key);
               bundle != job.worker_bundles.end()) {
      // Packed for the workers already, with a candidate of another problem.
      stored.artifact_sha256 = bundle->second;
      MarkReadyLocked(job, stored);
    } else if (job.building.insert(stored.config_key).second) {
      to_build.push_back(stored.config);  // else its build is under way
    }
  }
  ScheduleBuildsLocked(job, to_build);
  ChangedLocked(job);
  return Status::Ok();
}

}  // namespace tf::coordinator
