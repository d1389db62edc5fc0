// Admission and binding: a submitted job checked and stored, then bound to
// a device class when a matching device is registered.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <utility>

#include "common/files.h"
#include "compiler/fingerprint.h"
#include "compiler/toolchain.h"
#include "coordinator/coordinator.h"
#include "coordinator/job_rules.h"
#include "kernelspec/config.h"
#include "kernelspec/space.h"
#include "search/transfer.h"
#include "vendors/toolchains.h"

namespace tf::coordinator {
namespace {

// What an earlier job's result says of the configuration itself, under the
// same fingerprint (tolerances, inputs and pruning switches included): its
// time, or that the device's limits prune it. A failure is run again: it
// may have been the machine's (a compiler missing on a worker, a time limit
// under load, a fault), and what a run under other conditions finds counts.
bool Reusable(v1::ResultStatus status) {
  return status == v1::RESULT_STATUS_OK || status == v1::RESULT_STATUS_EARLY_STOPPED ||
         status == v1::RESULT_STATUS_PRUNED;
}

// The toolchain in the fingerprint of a job its workers compile: until it is
// bound, and after if the worker did not say which compiler it has.
constexpr char kCompiledOnTheWorkers[] = "compiled on the workers";

// Refuses a spec whose constraints leave every problem without a
// configuration on any device, rather than failing its job when a device
// binds it. Problems whose constraints use device properties, or too large
// to walk in kEmptinessCheckTime, are not judged.
constexpr auto kEmptinessCheckTime = std::chrono::milliseconds(200);

Status CheckSomeProblemHasConfigurations(const v1::KernelSpec& spec) {
  const auto deadline = std::chrono::steady_clock::now() + kEmptinessCheckTime;
  std::string empty;
  for (const v1::Problem& problem : spec.problems()) {
    auto space = kernelspec::SearchSpace::Create(spec, problem, /*device=*/{});
    if (!space.ok()) return Status::Ok();  // depends on the device: judged at bind
    bool complete = false;
    const uint64_t valid = space->CountValid(
        [&](uint64_t found, double) {
          return found == 0 && std::chrono::steady_clock::now() < deadline;
        },
        &complete);
    if (valid > 0 || !complete) return Status::Ok();
    empty += (empty.empty() ? "" : ", ") + kernelspec::ProblemText(problem);
  }
  return Status::InvalidArgument(
      "no configuration satisfies the constraints, for any problem (" + empty +
      "); `tunefleet space SPEC` counts them without submitting, as you change the constraints");
}

// "a, b, c and 2 more": a fleet's names in a line that stays short.
std::string FewOf(const std::set<std::string>& names) {
  constexpr size_t kNamed = 3;
  std::string text;
  size_t named = 0;
  for (const std::string& name : names) {
    if (named++ == kNamed) break;
    text += (text.empty() ? "" : ", ") + name;
  }
  if (names.size() > kNamed) text += " and " + std::to_string(names.size() - kNamed) + " more";
  return text;
}

// The device a target asks for, in the fields Matches compares that it sets:
// "device of vendor V, arch A, label L".
std::string WantedDevice(const v1::Target& target) {
  std::string fields;
  for (const auto& [name, value] : {std::pair{"vendor", target.vendor()},
                                    {"arch", target.arch()},
                                    {"class", target.device_class()},
                                    {"label", target.label()}}) {
    if (!value.empty()) {
      fields += (fields.empty() ? " of " : ", ") + std::string(name) + " " + value;
    }
  }
  return "device" + fields;
}

}  // namespace

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

Result<v1::Job> Coordinator::Submit(const v1::SubmitJobRequest& request,
                                    const auth::Caller& caller) {
  v1::KernelSpec spec = request.spec();
  std::vector<v1::SourceFile> sources(request.sources().begin(), request.sources().end());
  TF_RETURN_IF_ERROR(kernelspec::ValidateSpec(spec, sources, options_.limits));
  TF_RETURN_IF_ERROR(vendors::CompleteTarget(&spec));
  TF_RETURN_IF_ERROR(CheckSomeProblemHasConfigurations(spec));
  // Without the toolchain here the workers check the spec when they build it;
  // the compiler of workers that build is known once the job is bound.
  std::string toolchain_version = kCompiledOnTheWorkers;
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
  TF_RETURN_IF_ERROR(kernel_owners_.CheckSubmit(row.kernel, caller));
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
  kernel_owners_.Submitted(row.kernel, caller);
  Job& job = jobs_[row.id];
  job.row = std::move(row);
  job.fingerprint_created_ms = fingerprint_created_ms;
  job.problem_index = ProblemIndex(job.row.spec);
  job.workers_compile = toolchain_version == kCompiledOnTheWorkers;
  spdlog::info("job {} submitted: kernel {}, fingerprint {}", job.row.id, job.row.kernel,
               job.row.fingerprint.substr(0, 12));
  BindQueuedJobsLocked();
  work_cv_.notify_all();  // a worker waiting for a lease binds what was left queued
  return ToProto(job);
}

bool Coordinator::FingerprintedForWorkers(const db::JobRow& row) {
  return row.fingerprint ==
         compiler::KernelFingerprint(row.spec, row.sources, kCompiledOnTheWorkers);
}

void Coordinator::BindQueuedJobsLocked(const std::string& asking_worker) {
  int64_t now = NowUnixMs();
  for (auto& [id, job] : jobs_) {
    if (job.row.state != v1::JOB_STATE_QUEUED) continue;
    for (const auto& [worker_id, worker] : workers_->workers()) {
      if (!workers_->Alive(worker, now)) continue;
      if (job.workers_compile && worker_id != asking_worker) continue;
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

std::string Coordinator::WaitingForLocked(const Job& job) const {
  if (job.row.state == v1::JOB_STATE_RUNNING) {
    // Stranded: every worker with a device that serves it is silent.
    std::set<std::string> silent;
    for (const auto& [worker_id, worker] : workers_->workers()) {
      for (const auto& device : worker.row.devices) {
        if (ServesJob(device, job)) silent.insert(worker_id);
      }
    }
    return "no live device of class " + job.row.device_class +
           (job.row.toolchain.empty() ? "" : " with " + job.row.toolchain) + ": " +
           (silent.empty() ? "no worker with one is registered"
                           : "its workers stopped (" + FewOf(silent) + " silent)") +
           "; the job resumes when one registers";
  }
  const int64_t now = NowUnixMs();
  size_t live_workers = 0, matching = 0, busy = 0;
  std::set<std::string> live_classes, silent_with_one;
  for (const auto& [worker_id, worker] : workers_->workers()) {
    const bool alive = workers_->Alive(worker, now);
    live_workers += alive;
    for (const auto& device : worker.row.devices) {
      if (alive) live_classes.insert(device.device_class());
      if (!Matches(job.row.spec, device)) continue;
      if (!alive) {
        silent_with_one.insert(worker_id);
        continue;
      }
      ++matching;
      const std::string& id = worker_id;  // clang 14 captures no structured binding
      busy += std::any_of(leases_.begin(), leases_.end(), [&](const auto& lease) {
        return lease.second.worker_id == id && lease.second.device_index == device.index();
      });
    }
  }
  const std::string wanted = WantedDevice(job.row.spec.target());
  const std::string match = std::to_string(matching) + (matching == 1 ? " matches" : " match");
  if (matching > 0 && job.workers_compile) {
    // Only the worker that asks binds it, and a device asks once its lease ends.
    return "waiting for a free " + wanted + " (" + match + ", " + std::to_string(busy) +
           " busy with other jobs' leases): compiled on its workers, the job is bound when one "
           "asks for work";
  }
  if (matching > 0) {
    // Bound at once unless binding failed, which the log says.
    return "binding to a " + wanted + " (" + match +
           "); if it stays queued, the coordinator's log says why";
  }
  std::string fleet = "no worker is registered";
  if (live_workers > 0) {
    fleet = "registered: " + std::to_string(live_workers) +
            (live_workers == 1 ? " live worker" : " live workers") + ", with devices " +
            FewOf(live_classes);
  } else if (!workers_->workers().empty()) {
    fleet = "no registered worker is alive";
  }
  if (!silent_with_one.empty()) {
    fleet += "; " + FewOf(silent_with_one) +
             (silent_with_one.size() == 1 ? " has one but is silent" : " have one but are silent");
  }
  return "waiting for a worker with a " + wanted + " (" + fleet + ")";
}

// Fixes the job's device class, starts its search with that device's
// properties, reuses earlier results, and proposes the first candidates.
Status Coordinator::BindJobLocked(Job& job, const v1::DeviceInfo& device) {
  const auto& spec = job.row.spec;
  kernelspec::DeviceProperties properties(device.properties().begin(), device.properties().end());
  // A job that cannot be bound fails on this device's class, which its
  // status names.
  auto fail = [&](const std::string& error) {
    job.row.device_class = device.device_class();
    FailJobLocked(job, error);
  };
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
      fail(error);
      return Status::ResourceExhausted(error);
    }
  }
  if (Status target = SetTargetLocked(job, device); !target.ok()) {
    fail(target.message());
    return target;
  }
  const int64_t now = NowUnixMs();
  auto search = SearchDriver::Create(spec, properties, options_.limits.max_space_size, now);
  if (!search.ok()) {
    fail(search.status().message());
    return search.status();
  }
  db::JobRow updated = job.row;
  updated.device_class = device.device_class();
  updated.state = v1::JOB_STATE_RUNNING;
  updated.started_ms = updated.updated_ms = now;
  // Built on the workers, the job is measured with the bound device's
  // worker's compiler: it names the results, and only devices whose workers
  // build with it take its leases (ServesJob).
  int64_t fingerprint_created_ms = job.fingerprint_created_ms;
  auto compiler = device.toolchains().find(spec.language());
  if (job.build_on_worker && compiler != device.toolchains().end()) {
    updated.toolchain = compiler->second;
    updated.fingerprint = compiler::KernelFingerprint(
        spec, updated.sources, std::string(kCompiledOnTheWorkers) + " with " + compiler->second);
    TF_ASSIGN_OR_RETURN(fingerprint_created_ms,
                        db_->EnsureKernel(updated.fingerprint, updated.kernel, now));
  }
  TF_ASSIGN_OR_RETURN(auto earlier, db_->FindResults(updated.fingerprint, device.device_class()));
  TF_RETURN_IF_ERROR(db_->UpdateJob(updated));
  job.row = std::move(updated);
  job.fingerprint_created_ms = fingerprint_created_ms;
  job.search = std::move(search).value();

  // The latest result the database holds for each (configuration, problem)
  // of this kernel on this device class is reused where the job's
  // constraints admit it and it holds for this job too: the strategies learn
  // from it and the job keeps it as its own.
  std::map<std::string, const db::ResultRow*> earlier_by_key;
  for (const auto& r : earlier) {
    const db::ResultRow*& latest = earlier_by_key[r.config_key + "|" + r.problem_key];
    if (!latest || std::pair(r.created_ms, r.candidate_id) >
                       std::pair(latest->created_ms, latest->candidate_id)) {
      latest = &r;
    }
  }
  std::vector<NewCandidate> reused;
  for (const auto& [key, r] : earlier_by_key) {
    if (!Reusable(r->status)) continue;
    auto problem = job.problem_index.find(r->problem_key);
    auto config = kernelspec::ParseConfigKey(r->config_key);
    if (problem == job.problem_index.end() || !config.ok() ||
        !job.search->InSpace(problem->second, *config)) {
      continue;
    }
    NewCandidate c{problem->second, *std::move(config), *r};
    c.earlier->cached = true;
    reused.push_back(std::move(c));
  }
  TF_RETURN_IF_ERROR(AddCandidatesLocked(job, reused));
  TF_RETURN_IF_ERROR(InheritBestLocked(job));
  TF_RETURN_IF_ERROR(SeedWarmStartLocked(job));
  spdlog::info("job {} bound to {}{}: strategy {}, {} earlier results reused", job.row.id,
               job.row.device_class,
               job.row.toolchain.empty()
                   ? ""
                   : std::string(", ") + kCompiledOnTheWorkers + " with " + job.row.toolchain,
               spec.search().strategy(), job.row.candidates_cached);
  AdvanceSearchLocked(job);
  return Status::Ok();
}

Status Coordinator::InheritBestLocked(Job& job) {
  // Per problem of the job, the fastest best of another kernel of this source
  // on this class, by the figure it answers with (a re-timing's winner's).
  auto figure = [](const db::BestRow& b) { return db::AnsweringTiming(b.result).median_ns(); };
  TF_ASSIGN_OR_RETURN(std::vector<db::BestRow> rows,
                      db_->LoadBest(job.row.fingerprint, job.row.device_class));
  std::map<std::string, const db::BestRow*> fastest;
  for (const db::BestRow& b : rows) {
    if (b.kernel == job.row.kernel || !job.problem_index.count(b.problem_key)) continue;
    const db::BestRow*& f = fastest[b.problem_key];
    if (!f || figure(b) < figure(*f)) f = &b;
  }
  const int64_t now = NowUnixMs();
  for (const auto& [problem_key, b] : fastest) {
    db::BestRow row = *b;
    row.kernel = job.row.kernel;
    row.result.timing.set_median_ns(figure(*b));  // the stored best's figure
    TF_ASSIGN_OR_RETURN(bool inherited, db_->InheritBest(row.kernel, row.result, now));
    if (inherited) best_.Put(row);
  }
  return Status::Ok();
}

Status Coordinator::SeedWarmStartLocked(Job& job) {
  const v1::KernelSpec& spec = job.row.spec;
  const std::string& device_class = job.row.device_class;
  // The kernel's results by (problem key, device class), from the
  // fingerprint the best index answers with for each class.
  using Run = std::pair<std::string, std::string>;
  std::map<Run, std::vector<search::KeyedResult>> runs;
  std::set<std::pair<std::string, std::string>> loaded;  // (fingerprint, device class)
  for (const v1::QueryBestResponse& tuned : best_.List(spec.name(), "")) {
    if (!loaded.insert({tuned.fingerprint(), tuned.device_class()}).second) continue;
    TF_ASSIGN_OR_RETURN(auto rows, db_->FindResults(tuned.fingerprint(), tuned.device_class()));
    for (const db::ResultRow& r : rows) {
      std::optional<double> time;
      if (!IsFailure(r.status)) time = r.timing.median_ns();
      runs[{r.problem_key, r.device_class}].emplace_back(r.config_key, time);
    }
  }
  // Each run's worths are computed once: they do not depend on the problem.
  std::map<Run, size_t> source_of;
  std::vector<std::vector<search::KeyedResult>> sources;
  for (auto& [run, results] : runs) {
    source_of[run] = sources.size();
    sources.push_back(std::move(results));
  }
  const search::WarmStartRanking ranking(sources);
  for (int i = 0; i < spec.problems_size(); ++i) {
    v1::QueryBestRequest query;
    query.set_kernel(spec.name());
    *query.mutable_problem() = spec.problems(i);
    query.set_device_class(device_class);
    v1::QueryBestResponse nearest = best_.Query(query);
    if (nearest.found()) job.search->Seed(i, nearest.config());
    // This problem's own results on this class are reused, not transferred.
    auto own = source_of.find({kernelspec::ProblemKey(spec.problems(i)), device_class});
    std::optional<size_t> left_out;
    if (own != source_of.end()) left_out = own->second;
    for (const std::string& key : ranking.Rank(search::kWarmStartConfigs, left_out)) {
      auto config = kernelspec::ParseConfigKey(key);
      if (config.ok()) job.search->Seed(i, *config);
    }
  }
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

}  // namespace tf::coordinator
