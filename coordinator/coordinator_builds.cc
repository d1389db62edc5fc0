// Build intake: configurations compiled here (the build queue) or packed
// as bundles for the workers, and their outcomes made candidates.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "common/files.h"
#include "compiler/toolchain.h"
#include "coordinator/coordinator.h"
#include "kernelspec/config.h"
#include "kernelspec/space.h"

namespace tf::coordinator {
namespace {

db::BuildRow BuildRowOf(const compiler::ConfigBuild& b) {
  return {kernelspec::ConfigKey(b.config),
          b.ok,
          b.artifact_sha256,
          b.symbol,
          b.diagnostics,
          b.reference_symbol,
          b.resources};
}

}  // namespace

std::optional<db::ResultRow> Coordinator::UseBuildLocked(const Job& job, Candidate& candidate,
                                                         const db::BuildRow& build) const {
  candidate.artifact_sha256 = build.artifact_sha256;
  candidate.symbol = build.symbol;
  candidate.reference_symbol = build.reference_symbol;
  candidate.resources = build.resources;
  kernelspec::DeviceProperties limits(job.device.properties().begin(),
                                      job.device.properties().end());
  Status fits = job.toolchain->CheckResources(job.row.spec, candidate.config, candidate.problem,
                                              build.resources, limits);
  if (fits.ok()) return std::nullopt;
  v1::CandidateResult pruned;
  pruned.set_status(v1::RESULT_STATUS_PRUNED);
  pruned.set_error(fits.message());
  return MakeResultRow(job, candidate, pruned, "");
}

void Coordinator::ScheduleBuildsLocked(Job& job, const std::vector<v1::Config>& configs) {
  if (configs.empty()) return;
  if (!job.build_on_worker) {
    builds_->Enqueue({job.row.id, job.row.spec, job.row.sources, configs, job.device.arch()});
    return;
  }
  if (Status packed = PackBundlesLocked(job, configs); !packed.ok()) {
    FailJobLocked(job, "packing batches for the workers: " + packed.message());
  }
}

Result<std::map<std::string, db::BuildRow>> Coordinator::LoadBuildsLocked(const Job& job) {
  if (job.build_on_worker) return std::map<std::string, db::BuildRow>{};  // none here
  return db_->LoadBuilds(job.row.fingerprint, job.target);
}

Status Coordinator::PackBundlesLocked(Job& job, const std::vector<v1::Config>& configs) {
  const size_t batch = static_cast<size_t>(std::max(1, options_.build_batch_size));
  for (size_t first = 0; first < configs.size(); first += batch) {
    v1::BuildBundle bundle;
    *bundle.mutable_spec() = job.row.spec;
    for (const auto& source : job.row.sources) *bundle.add_sources() = source;
    const size_t end = std::min(configs.size(), first + batch);
    for (size_t k = first; k < end; ++k) *bundle.add_configs() = configs[k];
    TF_ASSIGN_OR_RETURN(std::string sha256, store_->Put(bundle.SerializeAsString()));
    for (size_t k = first; k < end; ++k) {
      job.worker_bundles[kernelspec::ConfigKey(configs[k])] = sha256;
    }
  }
  for (int64_t id : job.candidate_ids) {
    Candidate& c = candidates_[id];
    auto bundle = job.worker_bundles.find(c.config_key);
    if (bundle == job.worker_bundles.end() || c.state != db::CandidateState::kWaitingBuild) {
      continue;
    }
    c.artifact_sha256 = bundle->second;
    MarkReadyLocked(job, c);
  }
  job.row.builds_done += static_cast<int64_t>(configs.size());
  ChangedLocked(job);
  return Status::Ok();
}

void Coordinator::MarkReadyLocked(Job& job, Candidate& candidate) {
  candidate.state = db::CandidateState::kReady;
  candidate.lease_id = 0;
  job.ready.push_back(candidate.id);
  work_cv_.notify_all();
}

void Coordinator::OnBatchBuilt(int64_t job_id, const std::vector<compiler::ConfigBuild>& builds) {
  std::lock_guard lock(mu_);
  if (Status recorded = RecordBuildsLocked(job_id, builds); !recorded.ok()) {
    // The builds stay in the artifact store; the reaper tries again.
    spdlog::error("job {}: cannot record builds: {}; retrying", job_id, recorded.message());
    unrecorded_builds_.emplace_back(job_id, builds);
  }
}

Status Coordinator::RecordBuildsLocked(int64_t job_id,
                                       const std::vector<compiler::ConfigBuild>& builds) {
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return Status::Ok();
  Job& job = it->second;
  std::map<std::string, const compiler::ConfigBuild*> by_key;
  for (const auto& b : builds) by_key[kernelspec::ConfigKey(b.config)] = &b;

  db::JobRow updated = job.row;
  std::vector<std::pair<Candidate*, db::ResultRow>> failed;
  std::vector<Candidate*> ready;
  std::set<std::string> resolved_configs;
  for (int64_t id : job.candidate_ids) {
    Candidate& c = candidates_[id];
    auto b = by_key.find(c.config_key);
    if (b == by_key.end() || c.state != db::CandidateState::kWaitingBuild) continue;
    resolved_configs.insert(c.config_key);
    std::optional<db::ResultRow> result;
    if (b->second->ok) {
      result = UseBuildLocked(job, c, BuildRowOf(*b->second));
      if (!result) {
        ready.push_back(&c);
        continue;
      }
    } else {
      v1::CandidateResult compile_failed;
      compile_failed.set_status(v1::RESULT_STATUS_COMPILE_FAILED);
      compile_failed.set_error(b->second->diagnostics);
      result = MakeResultRow(job, c, compile_failed, "");
    }
    failed.emplace_back(&c, std::move(*result));
    updated.candidates_done++;
    updated.candidates_failed++;
  }
  updated.updated_ms = NowUnixMs();
  auto txn = db_->Begin();
  Status status = txn->begin_status();
  for (const auto& [key, b] : by_key) {
    if (status.ok()) status = db_->PutBuild(job.row.fingerprint, job.target, BuildRowOf(*b));
  }
  std::vector<int64_t> ready_ids, failed_ids;
  for (auto* c : ready) ready_ids.push_back(c->id);
  for (auto& [c, row] : failed) {
    failed_ids.push_back(c->id);
    if (status.ok()) status = db_->InsertResult(row).status();
  }
  if (status.ok()) status = db_->SetCandidateState(ready_ids, db::CandidateState::kReady, 0);
  if (status.ok()) status = db_->SetCandidateState(failed_ids, db::CandidateState::kDone, 0);
  if (status.ok()) status = db_->UpdateJob(updated);
  if (status.ok()) status = txn->Commit();
  TF_RETURN_IF_ERROR(status);
  job.row = std::move(updated);
  job.row.builds_done += static_cast<int64_t>(resolved_configs.size());
  for (const std::string& key : resolved_configs) job.building.erase(key);
  for (auto* c : ready) MarkReadyLocked(job, *c);
  for (auto& [c, row] : failed) {
    c->state = db::CandidateState::kDone;
    observer_->OnResultRecorded(row);
    TellSearchLocked(job, *c, row);
  }
  ChangedLocked(job);
  AdvanceSearchLocked(job);
  return Status::Ok();
}

}  // namespace tf::coordinator
