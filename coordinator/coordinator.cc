#include "coordinator/coordinator.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <set>
#include <tuple>

#include "common/files.h"
#include "compiler/fingerprint.h"
#include "compiler/toolchain.h"
#include "kernelspec/config.h"
#include "kernelspec/space.h"
#include "vendors/toolchains.h"

namespace tf::coordinator {
namespace {

bool IsTerminal(v1::JobState state) {
  return state == v1::JOB_STATE_SUCCEEDED || state == v1::JOB_STATE_FAILED ||
         state == v1::JOB_STATE_CANCELLED;
}

bool IsFailure(v1::ResultStatus status) {
  return status != v1::RESULT_STATUS_OK && status != v1::RESULT_STATUS_EARLY_STOPPED;
}

db::BuildRow BuildRowOf(const compiler::ConfigBuild& b) {
  return {kernelspec::ConfigKey(b.config),
          b.ok,
          b.artifact_sha256,
          b.symbol,
          b.diagnostics,
          b.reference_symbol,
          b.resources};
}

std::map<std::string, int> ProblemIndex(const v1::KernelSpec& spec) {
  std::map<std::string, int> index;
  for (int i = 0; i < spec.problems_size(); ++i) {
    index.emplace(kernelspec::ProblemKey(spec.problems(i)), i);
  }
  return index;
}

Status JobNotFound(int64_t job_id) {
  return Status::NotFound("job " + std::to_string(job_id) + " does not exist");
}

Observer* ObserverOrNone(Observer* observer) {
  static Observer none;
  return observer ? observer : &none;
}

}  // namespace

Coordinator::Coordinator(const CoordinatorOptions& options)
    : options_(options), observer_(ObserverOrNone(options.observer)) {}

Result<std::unique_ptr<Coordinator>> Coordinator::Start(const CoordinatorOptions& options) {
  std::unique_ptr<Coordinator> c(new Coordinator(options));
  TF_ASSIGN_OR_RETURN(c->store_, compiler::ArtifactStore::Open(options.artifact_dir));
  TF_ASSIGN_OR_RETURN(c->db_, db::TuningDb::Open(options.db_path, options.db_synchronous_full));
  compiler::BuildOptions build_options;
  build_options.batch_size = options.build_batch_size;
  build_options.parallelism = options.build_parallelism;
  build_options.timeout_s = options.build_timeout_s;
  Coordinator* self = c.get();
  c->builds_ = std::make_unique<BuildQueue>(
      *c->store_, build_options,
      [self](int64_t job_id, std::vector<compiler::ConfigBuild> builds) {
        self->OnBatchBuilt(job_id, builds);
      },
      *c->observer_);
  {
    std::lock_guard lock(c->mu_);
    TF_RETURN_IF_ERROR(c->Load());
  }
  c->reaper_ = std::thread([self] { self->ReaperLoop(); });
  return c;
}

Coordinator::~Coordinator() {
  stopping_ = true;
  work_cv_.notify_all();
  change_cv_.notify_all();
  if (reaper_.joinable()) reaper_.join();
  builds_.reset();  // its callbacks use this object
}

// Rebuilds memory from the database: unfinished jobs and their candidates,
// active leases (given a fresh deadline), workers and the best configs.
Status Coordinator::Load() {
  TF_ASSIGN_OR_RETURN(auto tokens, db_->LoadTokens());
  for (const auto& token : tokens) tokens_.Put(token.info, token.hash);
  TF_ASSIGN_OR_RETURN(auto best, db_->LoadBest());
  for (const auto& row : best) best_.Put(row);
  TF_ASSIGN_OR_RETURN(auto workers, db_->LoadWorkers());
  for (auto& row : workers) {
    Worker w;
    w.row = std::move(row);
    w.expired = true;  // known, but asked to register again before new leases
    next_worker_seq_++;
    workers_[w.row.id] = std::move(w);
  }
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
    for (int64_t id : l.candidate_ids) lease_of_candidate[id] = l.id;
    leases_[l.id] = std::move(lease);
    observer_->OnLeaseStarted(l.id, l.worker_id, l.device_index);
  }
  TF_ASSIGN_OR_RETURN(auto rows, db_->LoadJobs(/*unfinished_only=*/true, 1 << 30));
  for (auto& row : rows) {
    Job& job = jobs_[row.id];
    job.row = std::move(row);
    TF_ASSIGN_OR_RETURN(job.fingerprint_created_ms,
                        db_->EnsureKernel(job.row.fingerprint, job.row.kernel, job.row.created_ms));
    job.problem_index = ProblemIndex(job.row.spec);
    if (job.row.device_class.empty()) continue;  // still waiting for a device
    // The bound class's limits and arch, from a registered device of it.
    v1::DeviceInfo device;
    device.set_device_class(job.row.device_class);
    device.set_arch(job.row.spec.target().arch());
    for (const auto& [id, w] : workers_) {
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
    job.configurations = static_cast<int64_t>(job.config_keys.size());
    job.builds_done = job.configurations - static_cast<int64_t>(to_build.size());
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

bool Coordinator::Matches(const v1::KernelSpec& spec, const v1::DeviceInfo& device) const {
  const v1::Target& target = spec.target();
  if (!target.vendor().empty() && target.vendor() != device.vendor()) return false;
  if (!vendors::CodeRunsOn(spec, target.arch(), device.arch())) return false;
  if (!target.device_class().empty() && target.device_class() != device.device_class()) {
    return false;
  }
  if (!target.label().empty() && std::find(device.labels().begin(), device.labels().end(),
                                           target.label()) == device.labels().end()) {
    return false;
  }
  return true;
}

Status Coordinator::CheckJobOwner(const db::JobRow& row, const auth::Caller& caller) const {
  if (!caller.own_only || row.owner_token == caller.token_id) return Status::Ok();
  return Status::PermissionDenied("job " + std::to_string(row.id) + " belongs to another token");
}

Status Coordinator::CheckWorkerOwnerLocked(const std::string& worker_id,
                                           const auth::Caller& caller) const {
  if (!caller.own_only) return Status::Ok();
  auto w = workers_.find(worker_id);
  if (w == workers_.end() || w->second.row.owner_token == caller.token_id) return Status::Ok();
  return Status::PermissionDenied("worker " + worker_id + " belongs to another token");
}

Result<v1::Job> Coordinator::Submit(const v1::SubmitJobRequest& request,
                                    const auth::Caller& caller) {
  v1::KernelSpec spec = request.spec();
  std::vector<v1::SourceFile> sources(request.sources().begin(), request.sources().end());
  TF_RETURN_IF_ERROR(kernelspec::ValidateSpec(spec, sources, options_.limits));
  TF_RETURN_IF_ERROR(vendors::CompleteTarget(&spec));
  // Without the toolchain here the workers check the spec when they build it;
  // the compiler of workers that build is not known yet.
  std::string toolchain_version = "compiled on the workers";
  auto toolchain = vendors::MakeToolchain(spec);
  if (toolchain.ok()) {
    TF_RETURN_IF_ERROR((*toolchain)->Validate(spec));
    if (spec.target().compile_on() != "worker") toolchain_version = (*toolchain)->version();
  } else if (toolchain.status().code() != Code::kUnavailable ||
             spec.target().compile_on() == "coordinator") {
    return toolchain.status();
  }

  db::JobRow row;
  row.kernel = spec.name();
  row.fingerprint = compiler::KernelFingerprint(spec, sources, toolchain_version);
  row.spec = spec;
  row.sources = std::move(sources);
  row.state = v1::JOB_STATE_QUEUED;
  row.priority = request.priority();
  row.created_ms = row.updated_ms = NowUnixMs();
  row.owner_token = caller.token_id;

  std::lock_guard lock(mu_);
  const int64_t in_flight = std::count_if(jobs_.begin(), jobs_.end(), [](const auto& entry) {
    return !IsTerminal(entry.second.row.state);
  });
  if (options_.max_jobs_in_flight > 0 && in_flight >= options_.max_jobs_in_flight) {
    return Status::ResourceExhausted(std::to_string(in_flight) +
                                     " jobs are queued or running, the coordinator's limit "
                                     "(--max-jobs-in-flight " +
                                     std::to_string(options_.max_jobs_in_flight) +
                                     "); wait for one to finish or cancel one");
  }
  const int64_t per_token = options_.max_jobs_in_flight_per_token;
  if (caller.token_id != 0 && per_token > 0) {
    const int64_t mine = std::count_if(jobs_.begin(), jobs_.end(), [&](const auto& entry) {
      return entry.second.row.owner_token == caller.token_id && !IsTerminal(entry.second.row.state);
    });
    if (mine >= per_token) {
      return Status::ResourceExhausted(
          "token " + std::to_string(caller.token_id) + " has " + std::to_string(mine) +
          " jobs queued or running, its limit (--max-jobs-in-flight-per-token " +
          std::to_string(per_token) + "); wait for one to finish or cancel one");
    }
  }
  int64_t fingerprint_created_ms = 0;
  {
    auto txn = db_->Begin();
    TF_RETURN_IF_ERROR(txn->begin_status());
    TF_ASSIGN_OR_RETURN(fingerprint_created_ms,
                        db_->EnsureKernel(row.fingerprint, row.kernel, row.created_ms));
    TF_RETURN_IF_ERROR(db_->InsertJob(row));
    TF_RETURN_IF_ERROR(txn->Commit());
  }
  Job& job = jobs_[row.id];
  job.row = std::move(row);
  job.fingerprint_created_ms = fingerprint_created_ms;
  job.problem_index = ProblemIndex(job.row.spec);
  spdlog::info("job {} submitted: kernel {}, fingerprint {}", job.row.id, job.row.kernel,
               job.row.fingerprint.substr(0, 12));
  BindQueuedJobsLocked();
  return ToProto(job);
}

void Coordinator::BindQueuedJobsLocked() {
  int64_t now = NowUnixMs();
  for (auto& [id, job] : jobs_) {
    if (job.row.state != v1::JOB_STATE_QUEUED) continue;
    for (const auto& [worker_id, worker] : workers_) {
      if (now - worker.last_heartbeat_ms > 3 * options_.heartbeat_interval_ms) continue;
      const v1::DeviceInfo* match = nullptr;
      for (const auto& device : worker.row.devices) {
        if (Matches(job.row.spec, device)) match = &device;
      }
      if (!match) continue;
      Status bound = BindJobLocked(job, *match);
      if (!bound.ok()) {
        spdlog::error("job {}: cannot bind to {}: {}", id, match->device_class(), bound.message());
      }
      break;
    }
  }
}

// Fixes the job's device class, starts its search with that device's
// properties, reuses earlier results, and proposes the first candidates.
Status Coordinator::BindJobLocked(Job& job, const v1::DeviceInfo& device) {
  const auto& spec = job.row.spec;
  kernelspec::DeviceProperties properties(device.properties().begin(), device.properties().end());
  for (const auto& problem : spec.problems()) {
    // The runner holds every buffer twice (working copies beside pristine
    // inputs and reference outputs); refuse before any build rather than
    // fail every candidate on the device.
    auto memory = properties.find("memory_bytes");
    auto bytes = kernelspec::ProblemBufferBytes(spec, problem);
    if (memory != properties.end() && bytes.ok() && *bytes > memory->second / 2) {
      std::string error = "problem " + kernelspec::ProblemText(problem) + ": its buffers take " +
                          std::to_string(*bytes) + " bytes, twice that is more than the " +
                          std::to_string(memory->second) + " bytes of memory of " +
                          device.device_class();
      FailJobLocked(job, error);
      return Status::ResourceExhausted(error);
    }
  }
  if (Status target = SetTargetLocked(job, device); !target.ok()) {
    FailJobLocked(job, target.message());
    return target;
  }
  const int64_t now = NowUnixMs();
  auto search = SearchDriver::Create(spec, properties, options_.limits.max_space_size, now);
  if (!search.ok()) {
    FailJobLocked(job, "on " + device.device_class() + ": " + search.status().message());
    return search.status();
  }
  TF_ASSIGN_OR_RETURN(auto earlier, db_->FindResults(job.row.fingerprint, device.device_class()));

  db::JobRow updated = job.row;
  updated.device_class = device.device_class();
  updated.state = v1::JOB_STATE_RUNNING;
  updated.started_ms = updated.updated_ms = now;
  TF_RETURN_IF_ERROR(db_->UpdateJob(updated));
  job.row = std::move(updated);
  job.search = std::move(search).value();

  // Every result the database holds for this kernel on this device class is
  // reused: the strategies learn from it and the job keeps it as its own.
  std::map<std::string, const db::ResultRow*> earlier_by_key;  // one per pair: the latest
  for (const auto& r : earlier) earlier_by_key[r.config_key + "|" + r.problem_key] = &r;
  std::vector<NewCandidate> reused;
  for (const auto& [key, r] : earlier_by_key) {
    auto problem = job.problem_index.find(r->problem_key);
    auto config = kernelspec::ParseConfigKey(r->config_key);
    if (problem == job.problem_index.end() || !config.ok()) continue;
    NewCandidate c{problem->second, *std::move(config), *r};
    c.earlier->cached = true;
    reused.push_back(std::move(c));
  }
  TF_RETURN_IF_ERROR(AddCandidatesLocked(job, reused));
  // Warm start: the kernel's best configuration for the nearest tuned
  // problem on this device class, then on any device class, go first.
  for (int i = 0; i < spec.problems_size(); ++i) {
    for (const std::string& device_class : {device.device_class(), std::string()}) {
      v1::QueryBestRequest query;
      query.set_kernel(spec.name());
      *query.mutable_problem() = spec.problems(i);
      query.set_device_class(device_class);
      v1::QueryBestResponse answer = best_.Query(query);
      if (answer.found()) job.search->Seed(i, answer.config());
    }
  }
  spdlog::info("job {} bound to {}: strategy {}, {} earlier results reused", job.row.id,
               job.row.device_class, spec.search().strategy(), job.row.candidates_cached);
  AdvanceSearchLocked(job);
  return Status::Ok();
}

size_t Coordinator::LiveDevicesLocked(const std::string& device_class) const {
  const int64_t now = NowUnixMs();
  size_t count = 0;
  for (const auto& [id, worker] : workers_) {
    if (worker.expired || now - worker.last_heartbeat_ms > 3 * options_.heartbeat_interval_ms) {
      continue;
    }
    for (const auto& d : worker.row.devices) count += d.device_class() == device_class;
  }
  return count;
}

void Coordinator::AdvanceSearchLocked(Job& job) {
  // Until the search waits for results: proposals whose results were known
  // at once (reused, pruned, failed builds) make room for more.
  while (job.row.state == v1::JOB_STATE_RUNNING && job.search) {
    if (job.unstored.empty()) {
      const size_t window =
          kProposalsPerDevice * std::max<size_t>(1, LiveDevicesLocked(job.row.device_class));
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
  job.search->Tell(candidate.problem_index, candidate.config, time);
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
    if (!result && built) {
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
      job.configurations++;
      if (built_flags[i]) job.builds_done++;
    }
    Candidate& stored = candidates_[c.id] = std::move(c);
    if (results[i]) {
      TellSearchLocked(job, stored, *results[i]);
    } else if (stored.state == db::CandidateState::kReady) {
      stored.state = db::CandidateState::kWaitingBuild;  // MarkReadyLocked sets it
      MarkReadyLocked(job, stored);
    } else if (job.building.insert(stored.config_key).second) {
      to_build.push_back(stored.config);  // else its build is under way
    }
  }
  ScheduleBuildsLocked(job, to_build);
  ChangedLocked(job);
  return Status::Ok();
}

Status Coordinator::SetTargetLocked(Job& job, const v1::DeviceInfo& device) {
  job.device = device;
  const std::string& compile_on = job.row.spec.target().compile_on();
  if (compile_on != "worker") {
    auto toolchain = vendors::MakeToolchain(job.row.spec, device.arch());
    if (toolchain.ok()) {
      job.target = (*toolchain)->target();
      job.toolchain = std::move(*toolchain);
      job.build_on_worker = false;
      return Status::Ok();
    }
    if (compile_on == "coordinator" || toolchain.status().code() != Code::kUnavailable) {
      return toolchain.status();
    }
    spdlog::info("job {}: {}; its workers compile it", job.row.id, toolchain.status().message());
  }
  job.target = device.arch();
  job.toolchain = nullptr;
  job.build_on_worker = true;
  return Status::Ok();
}

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
  std::map<std::string, std::string> bundle_of;  // config key -> bundle hash
  const size_t batch = static_cast<size_t>(std::max(1, options_.build_batch_size));
  for (size_t first = 0; first < configs.size(); first += batch) {
    v1::BuildBundle bundle;
    *bundle.mutable_spec() = job.row.spec;
    for (const auto& source : job.row.sources) *bundle.add_sources() = source;
    const size_t end = std::min(configs.size(), first + batch);
    for (size_t k = first; k < end; ++k) *bundle.add_configs() = configs[k];
    TF_ASSIGN_OR_RETURN(std::string sha256, store_->Put(bundle.SerializeAsString()));
    for (size_t k = first; k < end; ++k) bundle_of[kernelspec::ConfigKey(configs[k])] = sha256;
  }
  for (int64_t id : job.candidate_ids) {
    Candidate& c = candidates_[id];
    auto bundle = bundle_of.find(c.config_key);
    if (bundle == bundle_of.end() || c.state != db::CandidateState::kWaitingBuild) continue;
    c.artifact_sha256 = bundle->second;
    MarkReadyLocked(job, c);
  }
  job.builds_done += static_cast<int64_t>(bundle_of.size());
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
  job.builds_done += static_cast<int64_t>(resolved_configs.size());
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

// Forgets the ended job's candidates (they live on in the database).
void Coordinator::FinishIfDoneLocked(Job& job) {
  if (job.row.state != v1::JOB_STATE_RUNNING ||
      job.row.candidates_done < job.row.candidates_total || (job.search && !job.search->Done())) {
    return;
  }
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
  job.set_candidates_total(row.candidates_total);
  job.set_candidates_done(row.candidates_done);
  job.set_candidates_failed(row.candidates_failed);
  job.set_candidates_cached(row.candidates_cached);
  job.set_created_unix_ms(row.created_ms);
  job.set_updated_unix_ms(row.updated_ms);
  job.set_error(row.error);
  job.set_stop_reason(row.stop_reason);
  job.set_priority(row.priority);
  auto best = db_->JobBest(row.id);
  if (best.ok()) {
    for (const auto& r : *best) {
      auto* entry = job.add_best();
      auto problem = kernelspec::ParseProblem(r.problem_text);
      auto config = kernelspec::ParseConfigKey(r.config_key);
      if (problem.ok()) *entry->mutable_problem() = *problem;
      if (config.ok()) *entry->mutable_config() = *config;
      *entry->mutable_timing() = r.timing;
      entry->set_candidate_id(r.candidate_id);
    }
  }
  return job;
}

v1::Job Coordinator::ToProto(const Job& job) {
  v1::Job proto = ToProto(job.row);
  proto.set_configurations(job.configurations);
  proto.set_builds_done(job.builds_done);
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
  while (!stopping_ && !cancelled()) {
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
    int64_t job_id, const auth::Caller& caller) {
  std::lock_guard lock(mu_);
  TF_ASSIGN_OR_RETURN(auto job, db_->GetJob(job_id));
  if (!job) return JobNotFound(job_id);
  TF_RETURN_IF_ERROR(CheckJobOwner(*job, caller));
  TF_ASSIGN_OR_RETURN(auto rows, db_->ListResults(job_id));
  std::vector<RecordedResult> results;
  for (const auto& r : rows) {
    v1::CandidateResult out;
    out.set_candidate_id(r.candidate_id);
    out.set_status(r.status);
    out.set_error(r.error);
    *out.mutable_timing() = r.timing;
    out.set_max_abs_error(r.max_abs_error);
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

std::vector<v1::WorkerInfo> Coordinator::ListWorkers() {
  std::lock_guard lock(mu_);
  int64_t now = NowUnixMs();
  std::vector<v1::WorkerInfo> out;
  for (const auto& [id, w] : workers_) {
    v1::WorkerInfo info;
    info.set_worker_id(id);
    info.set_hostname(w.row.hostname);
    for (const auto& d : w.row.devices) *info.add_devices() = d;
    info.set_alive(now - w.last_heartbeat_ms <= 3 * options_.heartbeat_interval_ms);
    info.set_last_heartbeat_unix_ms(w.last_heartbeat_ms);
    // Not `id` in the lambda: clang 14 cannot capture structured bindings.
    const std::string& worker_id = id;
    info.set_active_leases(std::count_if(leases_.begin(), leases_.end(), [&](const auto& l) {
      return l.second.worker_id == worker_id;
    }));
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
  TF_RETURN_IF_ERROR(db_->PutWorker(w.row));
  std::string id = w.row.id;
  if (auto old = workers_.find(id); old != workers_.end()) {
    w.results_reported = old->second.results_reported;
  }
  workers_[id] = std::move(w);
  spdlog::info("worker {} registered from {} with {} device(s), first {}", id, request.hostname(),
               request.devices_size(), request.devices(0).device_class());
  BindQueuedJobsLocked();
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
    } else if (AllReportedLocked(l->second)) {
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

const v1::DeviceInfo* Coordinator::FindDeviceLocked(const std::string& worker_id,
                                                    int device_index) const {
  auto w = workers_.find(worker_id);
  if (w == workers_.end() || w->second.expired) return nullptr;
  for (const auto& d : w->second.row.devices) {
    if (d.index() == device_index) return &d;
  }
  return nullptr;
}

// Highest priority first; among equals the job with the fewest leases out,
// then the one served least recently: same-priority jobs share the workers
// (round robin when leases are taken one at a time).
Coordinator::Job* Coordinator::PickJobLocked(const v1::DeviceInfo& device) {
  Job* pick = nullptr;
  for (auto& [id, job] : jobs_) {
    if (job.row.state != v1::JOB_STATE_RUNNING || job.row.device_class != device.device_class()) {
      continue;
    }
    // A candidate reported under an expired lease may still be queued; the
    // front must be ready, the rest is checked when leased.
    while (!job.ready.empty() &&
           candidates_[job.ready.front()].state != db::CandidateState::kReady) {
      job.ready.pop_front();
    }
    if (job.ready.empty()) continue;
    auto rank = [](const Job& j) {
      return std::make_tuple(-j.row.priority, j.active_leases, j.last_lease_seq);
    };
    if (!pick || rank(job) < rank(*pick)) pick = &job;
  }
  return pick;
}

Result<v1::AcquireLeaseResponse> Coordinator::AcquireLease(const v1::AcquireLeaseRequest& request,
                                                           const auth::Caller& caller) {
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
  TF_RETURN_IF_ERROR(CheckWorkerOwnerLocked(request.worker_id(), caller));
  while (true) {
    const v1::DeviceInfo* device = FindDeviceLocked(request.worker_id(), request.device_index());
    if (!device) {
      return Status::NotFound("worker " + request.worker_id() + " has no registered device " +
                              std::to_string(request.device_index()) + "; register again");
    }
    workers_[request.worker_id()].last_heartbeat_ms = NowUnixMs();
    BindQueuedJobsLocked();  // a job may have waited for a device like this one
    if (Job* job = PickJobLocked(*device)) {
      TF_ASSIGN_OR_RETURN(auto lease, GrantLeaseLocked(*job, request.worker_id(),
                                                       request.device_index(), max_candidates));
      return respond(std::move(lease));
    }
    if (Lease* straggler = PickStragglerLocked(*device, request.worker_id())) {
      TF_ASSIGN_OR_RETURN(auto lease, GrantBackupLeaseLocked(*straggler, request.worker_id(),
                                                             request.device_index()));
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
  for (int64_t id : lease.candidate_ids) {
    const Candidate& c = candidates_[id];
    auto* lc = proto.add_candidates();
    lc->set_candidate_id(id);
    *lc->mutable_config() = c.config;
    *lc->mutable_problem() = c.problem;
    lc->set_symbol(c.symbol);
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

Coordinator::Lease* Coordinator::PickStragglerLocked(const v1::DeviceInfo& device,
                                                     const std::string& worker_id) {
  int64_t now = NowUnixMs();
  Lease* pick = nullptr;
  for (auto& [id, lease] : leases_) {
    if (lease.backup_of != 0 || lease.backup_id != 0 || lease.worker_id == worker_id) continue;
    auto job = jobs_.find(lease.job_id);
    if (job == jobs_.end() || job->second.row.state != v1::JOB_STATE_RUNNING ||
        job->second.row.device_class != device.device_class() || job->second.leases_finished < 2) {
      continue;
    }
    // Three times the usual lease, and never sooner than a heartbeat: a
    // lease of a healthy worker is rarely backed up, a stuck one soon.
    int64_t usual = job->second.lease_ms_total / job->second.leases_finished;
    if (now - lease.granted_ms < std::max(3 * usual, options_.heartbeat_interval_ms)) continue;
    if (UnreportedLocked(lease).empty()) continue;
    if (!pick || lease.granted_ms < pick->granted_ms) pick = &lease;
  }
  return pick;
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
  TF_RETURN_IF_ERROR(CheckWorkerOwnerLocked(request.worker_id(), caller));
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
  if (auto w = workers_.find(request.worker_id()); w != workers_.end()) {
    w->second.results_reported += response.recorded();
    w->second.last_heartbeat_ms = NowUnixMs();
  }
  if (release) {
    if (auto job = jobs_.find(finished->second.job_id); job != jobs_.end()) {
      job->second.leases_finished++;
      job->second.lease_ms_total += NowUnixMs() - finished->second.granted_ms;
    }
    ApplyReleaseLocked(*release);
  }
  for (auto& [id, row] : updated_jobs) {
    ChangedLocked(jobs_[id]);
    AdvanceSearchLocked(jobs_[id]);
  }
  return response;
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
    for (auto& [id, worker] : workers_) {
      if (!worker.expired && now - worker.last_heartbeat_ms > options_.lease_ttl_ms) {
        worker.expired = true;
        spdlog::warn("worker {} silent for {} ms; it must register again", id,
                     now - worker.last_heartbeat_ms);
      }
    }
  }
}

Result<std::string> Coordinator::ArtifactPath(const std::string& sha256) const {
  if (!store_->Has(sha256)) return Status::NotFound("no artifact with sha256 " + sha256);
  return store_->PathOf(sha256);
}

Activity Coordinator::CurrentActivity() {
  std::lock_guard lock(mu_);
  Activity activity;
  for (const auto& [id, lease] : leases_) {
    auto job = jobs_.find(lease.job_id);
    activity.leases.push_back({id, lease.job_id, job != jobs_.end() ? job->second.row.kernel : "",
                               lease.worker_id, lease.device_index,
                               static_cast<int64_t>(lease.candidate_ids.size()), lease.granted_ms,
                               lease.backup_of != 0});
  }
  for (const auto& [id, c] : candidates_) {
    if (c.state == db::CandidateState::kReady) activity.candidates_ready++;
    if (c.state == db::CandidateState::kWaitingBuild) activity.candidates_waiting_build++;
  }
  for (const auto& [id, job] : jobs_) activity.jobs[job.row.state]++;
  return activity;
}

}  // namespace tf::coordinator
