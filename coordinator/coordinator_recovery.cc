// Recovery: the coordinator's memory rebuilt from its database at start-up.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "common/files.h"
#include "coordinator/coordinator.h"
#include "coordinator/job_rules.h"
#include "kernelspec/config.h"
#include "kernelspec/space.h"

namespace tf::coordinator {

// Rebuilds memory from the database: unfinished jobs and their candidates,
// active leases (given a fresh deadline), workers with the count of their
// results, and the best configs.
Status Coordinator::Load() {
  TF_ASSIGN_OR_RETURN(auto tokens, db_->LoadTokens());
  for (const auto& token : tokens) tokens_.Put(token.info, token.hash);
  TF_ASSIGN_OR_RETURN(auto submitters, db_->LoadKernelSubmitters());
  TF_ASSIGN_OR_RETURN(auto set_owners, db_->LoadKernelOwners());
  kernel_owners_ = KernelOwners(submitters, set_owners, [this](int64_t token_id) {
    const v1::TokenInfo token = tokens_.Find(token_id);
    return token.role() == v1::ROLE_SUBMITTER ? std::optional(token.name()) : std::nullopt;
  });
  TF_ASSIGN_OR_RETURN(auto best, db_->LoadBest());
  for (const auto& row : best) best_.Put(row);
  TF_ASSIGN_OR_RETURN(auto completed, db_->LoadCompletedTunings());
  for (const auto& tuning : completed) best_.Complete(tuning);
  const WorkerRegistry::Options worker_options{
      .heartbeat_interval_ms = options_.heartbeat_interval_ms,
      .lease_ttl_ms = options_.lease_ttl_ms,
      .retention_ms = options_.worker_retention_ms};
  TF_ASSIGN_OR_RETURN(workers_, WorkerRegistry::Load(*db_, worker_options));
  TF_ASSIGN_OR_RETURN(auto leases, db_->LoadActiveLeases());
  std::unordered_map<int64_t, int64_t> lease_of_candidate;
  int64_t now = NowUnixMs();
  for (const auto& l : leases) {
    Lease lease{l.id,
                l.job_id,
                l.worker_id,
                l.device_index,
                l.artifact_sha256,
                l.candidate_ids,
                now + options_.lease_ttl_ms,
                now};
    lease.recovered = true;
    for (int64_t id : l.candidate_ids) lease_of_candidate[id] = l.id;
    leases_[l.id] = std::move(lease);
    observer_->OnLeaseStarted(l.id, l.worker_id, l.device_index);
  }
  if (!leases.empty()) {
    spdlog::info("leases out at the restart: {}; their workers may report them for {} ms",
                 leases.size(), options_.lease_ttl_ms);
  }
  TF_ASSIGN_OR_RETURN(auto rows, db_->LoadJobs(/*unfinished_only=*/true, 1 << 30));
  for (auto& row : rows) {
    Job& job = jobs_[row.id];
    job.row = std::move(row);
    TF_ASSIGN_OR_RETURN(job.fingerprint_created_ms,
                        db_->EnsureKernel(job.row.fingerprint, job.row.kernel, job.row.created_ms));
    job.problem_index = ProblemIndex(job.row.spec);
    if (job.row.device_class.empty()) {  // still waiting for a device
      job.workers_compile = FingerprintedForWorkers(job.row);
      continue;
    }
    // The bound class's limits and arch, from a registered device of it.
    v1::DeviceInfo device;
    device.set_device_class(job.row.device_class);
    device.set_arch(job.row.spec.target().arch());
    for (const auto& [id, w] : workers_->workers()) {
      for (const auto& d : w.row.devices) {
        if (d.device_class() == job.row.device_class) device = d;
      }
    }
    if (Status target = SetTargetLocked(job, device); !target.ok()) {
      FailJobLocked(job, target.message());
      continue;
    }
    // The search starts again from what the job's results say.
    kernelspec::DeviceProperties properties(device.properties().begin(), device.properties().end());
    auto search = SearchDriver::Create(job.row.spec, properties, options_.limits.max_space_size,
                                       job.row.started_ms > 0 ? job.row.started_ms : NowUnixMs());
    if (!search.ok()) {
      FailJobLocked(job, "on " + job.row.device_class + ": " + search.status().message());
      continue;
    }
    job.search = std::move(search).value();
    TF_ASSIGN_OR_RETURN(auto results, db_->ListResults(job.row.id));
    std::unordered_map<int64_t, const db::ResultRow*> result_of;
    for (const auto& r : results) result_of[r.candidate_id] = &r;
    TF_ASSIGN_OR_RETURN(auto candidate_rows, db_->LoadCandidates(job.row.id));
    TF_ASSIGN_OR_RETURN(auto builds, LoadBuildsLocked(job));
    std::vector<v1::Config> to_build;
    std::set<std::string> queued_configs;
    for (const auto& cr : candidate_rows) {
      Candidate c;
      c.id = cr.id;
      c.job_id = cr.job_id;
      c.config_key = cr.config_key;
      TF_ASSIGN_OR_RETURN(c.config, kernelspec::ParseConfigKey(cr.config_key));
      TF_ASSIGN_OR_RETURN(c.problem, kernelspec::ParseProblem(cr.problem_text));
      c.problem_key = kernelspec::ProblemKey(c.problem);
      c.problem_index = job.problem_index[c.problem_key];
      c.state = cr.state;
      auto build = builds.find(cr.config_key);
      bool built =
          build != builds.end() && build->second.ok && store_->Has(build->second.artifact_sha256);
      // Pruned candidates were recorded as done when their build came in.
      if (built) (void)UseBuildLocked(job, c, build->second);
      job.candidate_ids.push_back(c.id);
      Candidate& stored = candidates_[c.id] = std::move(c);
      job.config_keys.insert(stored.config_key);
      if (stored.state == db::CandidateState::kDone) {
        if (auto r = result_of.find(stored.id); r != result_of.end()) {
          TellSearchLocked(job, stored, *r->second);
        } else {
          job.search->Tell(stored.problem_index, stored.config, std::nullopt);  // never again
        }
        continue;
      }
      job.search->MarkPending(stored.problem_index, stored.config);
      if (stored.state == db::CandidateState::kLeased && lease_of_candidate.count(stored.id) &&
          built) {
        stored.lease_id = lease_of_candidate[stored.id];
        stored.leased_to.push_back(leases_[stored.lease_id].worker_id);
        job.active_leases++;
        continue;
      }
      if (built) {
        MarkReadyLocked(job, stored);
      } else {
        stored.state = db::CandidateState::kWaitingBuild;
        if (queued_configs.insert(stored.config_key).second) to_build.push_back(stored.config);
      }
    }
    job.row.configurations = static_cast<int64_t>(job.config_keys.size());
    job.row.builds_done = job.row.configurations - static_cast<int64_t>(to_build.size());
    job.building = std::move(queued_configs);
    ScheduleBuildsLocked(job, to_build);
    spdlog::info("resumed job {} ({}): {}/{} candidates done, {} ready, {} to build", job.row.id,
                 job.row.kernel, job.row.candidates_done, job.row.candidates_total,
                 job.ready.size(), to_build.size());
    AdvanceSearchLocked(job);
  }
  // Leases whose candidates were all done or dropped above have nothing left.
  std::erase_if(leases_, [&](const auto& entry) {
    return std::none_of(entry.second.candidate_ids.begin(), entry.second.candidate_ids.end(),
                        [&](int64_t id) {
                          auto it = candidates_.find(id);
                          return it != candidates_.end() && it->second.lease_id == entry.first;
                        });
  });
  return Status::Ok();
}

}  // namespace tf::coordinator
