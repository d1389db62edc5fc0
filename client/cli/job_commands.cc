// The subcommands that talk to the coordinator.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <set>

#include "client/cli/build_failures.h"
#include "client/cli/cli_util.h"
#include "client/cli/commands.h"
#include "client/cli/progress.h"
#include "client/cli/text_format.h"
#include "client/job_state.h"
#include "client/t4_format.h"
#include "common/files.h"
#include "kernelspec/config.h"
#include "kernelspec/spec_loader.h"

namespace tf::cli {
namespace {

using client::Json;

// The best configuration of each problem of a job.
void PrintBestTable(const v1::Job& job) {
  Table table({"PROBLEM", "CONFIG", "MEDIAN", "P10", "P90", "GFLOP/S", "CONFIRMED"});
  for (const v1::BestEntry& best : job.best()) {
    table.AddRow({kernelspec::ProblemText(best.problem()), kernelspec::ConfigKey(best.config()),
                  FormatNanos(best.timing().median_ns()), FormatNanos(best.timing().p10_ns()),
                  FormatNanos(best.timing().p90_ns()), FormatGflops(best.timing().gflops()),
                  best.confirmed_by_retiming() ? "re-timed" : ""});
  }
  if (table.empty()) {
    std::printf(job.state() == v1::JOB_STATE_CANCELLED
                    ? "no candidate succeeded before the job was cancelled\n"
                    : "no candidate succeeded\n");
    return;
  }
  table.Print(stdout);
  // A cancelled job's other problems simply never finished.
  const bool cancelled = job.state() == v1::JOB_STATE_CANCELLED;
  for (const v1::Problem& problem : job.problems_without_success()) {
    if (cancelled) {
      std::printf("%s: not finished: the job was cancelled\n",
                  kernelspec::ProblemText(problem).c_str());
    } else {
      std::printf("%s: no candidate succeeded (tunefleet results %lld says why)\n",
                  kernelspec::ProblemText(problem).c_str(), static_cast<long long>(job.job_id()));
    }
  }
  if (std::any_of(job.best().begin(), job.best().end(),
                  [](const v1::BestEntry& b) { return b.confirmed_by_retiming(); })) {
    std::printf(
        "re-timed: won the re-timing of its problem's finalists in alternation; the "
        "figures are that re-timing's\n");
  }
}

void PrintJobSummary(const v1::Job& job) {
  std::printf("job %lld %s: kernel %s on %s\n", static_cast<long long>(job.job_id()),
              client::JobStateName(job.state()), job.kernel().c_str(),
              job.device_class().empty() ? "(no device class yet)" : job.device_class().c_str());
  if (!job.waiting_for().empty()) std::printf("%s\n", job.waiting_for().c_str());
  std::printf("candidates: %lld done of %lld, %lld failed, %lld from earlier results\n",
              static_cast<long long>(job.candidates_done()),
              static_cast<long long>(job.candidates_total()),
              static_cast<long long>(job.candidates_failed()),
              static_cast<long long>(job.candidates_cached()));
  const std::string compiler =
      job.toolchain().empty() ? "" : ", compiled on the workers with " + job.toolchain();
  std::printf("builds: %lld of %lld configurations%s\n", static_cast<long long>(job.builds_done()),
              static_cast<long long>(job.configurations()), compiler.c_str());
  if (!job.stop_reason().empty()) std::printf("stopped: %s\n", job.stop_reason().c_str());
  if (!job.error().empty()) std::printf("error: %s\n", job.error().c_str());
}

// A finalist's re-timing in alternation: its median, and whether it won.
std::string Retimed(const v1::CandidateResult& result) {
  if (result.retiming().repeats() == 0) return "";
  return FormatNanos(result.retiming().median_ns()) + (result.retime_winner() ? " winner" : "");
}

// The error's first line; for a candidate without one, the compiler's first
// performance warning (a serialized WGMMA runs 30-40% slower), which the
// table would otherwise hide.
std::string ErrorOrWarning(const v1::CandidateResult& result) {
  if (!result.error().empty() || result.resources().performance_warnings().empty()) {
    return FirstLine(result.error());
  }
  return "warning: " + result.resources().performance_warnings(0);
}

// Each configuration that failed to build, once: it fails for every problem.
std::vector<FailedBuild> FailedBuilds(const std::vector<v1::CandidateResult>& results) {
  std::vector<FailedBuild> failed;
  std::set<std::string> configs;
  for (const v1::CandidateResult& result : results) {
    if (result.status() == v1::RESULT_STATUS_COMPILE_FAILED &&
        configs.insert(kernelspec::ConfigKey(result.config())).second) {
      failed.push_back({kernelspec::ConfigKey(result.config()), result.error()});
    }
  }
  return failed;
}

// A failed job's build failures in the compiler's words, so that whoever
// follows it sees why without asking for its results.
void PrintBuildFailuresOfFailedJob(client::Client& client, const v1::Job& job) {
  if (job.state() != v1::JOB_STATE_FAILED) return;
  Result<std::vector<v1::CandidateResult>> results = client.ListResults(job.job_id());
  if (results.ok()) PrintBuildFailures(stdout, FailedBuilds(*results));
}

// The answer's problem with its variables in the order --problem gave them
// (the coordinator keeps problems sorted by name).
v1::Problem InOrderOf(const v1::Problem& asked, const v1::Problem& answer) {
  v1::Problem ordered;
  for (const v1::ProblemVar& want : asked.vars()) {
    for (const v1::ProblemVar& var : answer.vars()) {
      if (var.name() == want.name()) *ordered.add_vars() = var;
    }
  }
  return ordered.vars_size() == answer.vars_size() ? ordered : answer;
}

int JobExitCode(const v1::Job& job) {
  return job.state() == v1::JOB_STATE_SUCCEEDED ? kExitOk : kExitJobFailed;
}

// What a follower stopped by SIGINT or SIGTERM writes: the job goes on.
char interrupted_note[256];
size_t interrupted_note_size = 0;

void OnInterrupt(int signal) {
  // Only async-signal-safe calls here.
  const ssize_t written = write(STDERR_FILENO, interrupted_note, interrupted_note_size);
  (void)written;
  _exit(128 + signal);  // the shells' convention: kExitInterrupted for SIGINT
}

// From here on, SIGINT or SIGTERM ends the process saying how to find the
// job again (on a terminal, under the progress line being redrawn).
void SayJobContinuesWhenInterrupted(int64_t job_id, bool redraw) {
  const std::string id = std::to_string(job_id);
  const std::string note = std::string(redraw ? "\n" : "") + "job " + id +
                           " continues on the coordinator: `tunefleet watch " + id +
                           "` to follow it, `tunefleet cancel " + id + "` to stop it\n";
  interrupted_note_size = std::min(note.size(), sizeof(interrupted_note));
  std::memcpy(interrupted_note, note.data(), interrupted_note_size);
  struct sigaction action = {};
  action.sa_handler = OnInterrupt;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

// Follows the job to its end: progress on stderr, so that stdout holds only
// the result, then its summary and best configurations, or its JSON.
int FollowJob(const GlobalOptions& global, client::Client& client, int64_t job_id) {
  const bool redraw = isatty(STDERR_FILENO);
  SayJobContinuesWhenInterrupted(job_id, redraw);
  JobProgress progress(stderr, redraw);
  Result<v1::Job> final_job = client.WatchJob(
      job_id, [&](const v1::Job& update) { progress.Update(update); },
      [&](const Status& lost) { progress.Note(lost.message() + "; reconnecting"); });
  progress.Finish();
  // Ended, or no longer followed: nothing goes on unseen any more.
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  if (!final_job.ok()) return Fail(final_job.status());
  if (global.json) {
    PrintJson(client::JobJson(*final_job));
  } else {
    PrintJobSummary(*final_job);
    // A job that ended without a best said why in its summary's error line.
    if (final_job->best_size() > 0 || final_job->error().empty()) PrintBestTable(*final_job);
    PrintBuildFailuresOfFailedJob(client, *final_job);
  }
  return JobExitCode(*final_job);
}

}  // namespace

int RunSubmit(const GlobalOptions& global, const SubmitOptions& options) {
  Result<kernelspec::LoadedSpec> loaded = kernelspec::LoadSpecFile(options.spec_path);
  if (!loaded.ok()) return FailUsage(loaded.status());
  auto client = Connect(global);
  if (!client.ok()) return Fail(client.status());
  Result<v1::Job> job = (*client)->Submit(loaded->spec, loaded->sources, options.priority);
  // The coordinator's checks of the spec name the field; the file is ours.
  if (job.status().code() == Code::kInvalidArgument) return FailSpec(*loaded, job.status());
  if (!job.ok()) return Fail(job.status());
  if (!options.wait) {
    if (global.json) {
      PrintJson(client::JobJson(*job));
    } else {
      std::printf("submitted job %lld (kernel %s)\n", static_cast<long long>(job->job_id()),
                  job->kernel().c_str());
    }
    return kExitOk;
  }
  std::fprintf(stderr, "submitted job %lld (kernel %s)\n", static_cast<long long>(job->job_id()),
               job->kernel().c_str());
  return FollowJob(global, **client, job->job_id());
}

int RunWatch(const GlobalOptions& global, int64_t job_id) {
  auto client = Connect(global);
  if (!client.ok()) return Fail(client.status());
  return FollowJob(global, **client, job_id);
}

int RunStatus(const GlobalOptions& global, int64_t job_id) {
  auto client = Connect(global);
  if (!client.ok()) return Fail(client.status());
  Result<v1::Job> job = (*client)->GetJob(job_id);
  if (!job.ok()) return Fail(job.status());
  if (global.json) {
    PrintJson(client::JobJson(*job));
  } else {
    PrintJobSummary(*job);
    if (job->best_size() > 0) PrintBestTable(*job);
    PrintBuildFailuresOfFailedJob(**client, *job);
  }
  return kExitOk;
}

int RunJobs(const GlobalOptions& global, int limit) {
  auto client = Connect(global);
  if (!client.ok()) return Fail(client.status());
  Result<std::vector<v1::Job>> jobs = (*client)->ListJobs(limit);
  if (!jobs.ok()) return Fail(jobs.status());
  if (global.json) {
    Json out = Json::array();
    for (const v1::Job& job : *jobs) out.push_back(client::JobJson(job));
    PrintJson(out);
    return kExitOk;
  }
  Table table({"ID", "KERNEL", "STATE", "DEVICE CLASS", "DONE", "FAILED", "AGE"});
  const int64_t now_ms = NowUnixMs();
  for (const v1::Job& job : *jobs) {
    table.AddRow(
        {std::to_string(job.job_id()), job.kernel(), client::JobStateName(job.state()),
         job.device_class(),
         std::to_string(job.candidates_done()) + "/" + std::to_string(job.candidates_total()),
         std::to_string(job.candidates_failed()),
         FormatSeconds((now_ms - job.created_unix_ms()) / 1e3)});
  }
  table.Print(stdout);
  for (const v1::Job& job : *jobs) {
    if (!job.waiting_for().empty()) {
      std::printf("job %lld: %s\n", static_cast<long long>(job.job_id()),
                  job.waiting_for().c_str());
    }
  }
  return kExitOk;
}

int RunCancel(const GlobalOptions& global, int64_t job_id) {
  auto client = Connect(global);
  if (!client.ok()) return Fail(client.status());
  Result<v1::Job> job = (*client)->Cancel(job_id);
  if (!job.ok()) return Fail(job.status());
  if (global.json) {
    PrintJson(client::JobJson(*job));
  } else if (job->state() == v1::JOB_STATE_CANCELLED) {
    std::printf("job %lld is cancelled\n", static_cast<long long>(job->job_id()));
  } else {
    // The coordinator leaves a job that has ended as it is.
    std::printf("job %lld had already %s; nothing to cancel\n",
                static_cast<long long>(job->job_id()), client::JobStateName(job->state()));
  }
  return kExitOk;
}

int RunResults(const GlobalOptions& global, int64_t job_id, const std::string& format) {
  if (format != "table" && format != "json" && format != "t4") {
    return FailUsage(
        Status::InvalidArgument("--format '" + format + "' is not one of table, json, t4"));
  }
  auto client = Connect(global);
  if (!client.ok()) return Fail(client.status());
  Result<std::vector<v1::CandidateResult>> results = (*client)->ListResults(job_id);
  if (!results.ok()) return Fail(results.status());
  if (format == "t4") {
    PrintJson(client::T4Results(*results));
    return kExitOk;
  }
  if (global.json || format == "json") {
    Json out = Json::array();
    for (const v1::CandidateResult& result : *results) out.push_back(client::ResultJson(result));
    PrintJson(out);
    return kExitOk;
  }
  Table table({"STATUS", "CONFIG", "PROBLEM", "MEDIAN", "P10", "P90", "GFLOP/S", "RE-TIMED",
               "WORKER", "ERROR"});
  for (const v1::CandidateResult& result : *results) {
    const v1::TimingStats& timing = result.timing();
    table.AddRow({client::ResultStatusName(result.status()), kernelspec::ConfigKey(result.config()),
                  kernelspec::ProblemText(result.problem()), FormatNanos(timing.median_ns()),
                  FormatNanos(timing.p10_ns()), FormatNanos(timing.p90_ns()),
                  FormatGflops(timing.gflops()), Retimed(result), result.worker(),
                  ErrorOrWarning(result)});
  }
  table.Print(stdout);
  PrintBuildFailures(stdout, FailedBuilds(*results));
  return kExitOk;
}

int RunWorkers(const GlobalOptions& global) {
  auto client = Connect(global);
  if (!client.ok()) return Fail(client.status());
  Result<std::vector<v1::WorkerInfo>> workers = (*client)->ListWorkers();
  if (!workers.ok()) return Fail(workers.status());
  if (global.json) {
    Json out = Json::array();
    for (const v1::WorkerInfo& worker : *workers) out.push_back(client::WorkerJson(worker));
    PrintJson(out);
    return kExitOk;
  }
  Table table({"ID", "HOST", "DEVICES", "ALIVE", "LEASES", "RESULTS"});
  for (const v1::WorkerInfo& worker : *workers) {
    std::string devices;
    for (const v1::DeviceInfo& device : worker.devices()) {
      if (!devices.empty()) devices += " ";
      devices += std::to_string(device.index()) + ":" + device.device_class();
    }
    table.AddRow({worker.worker_id(), worker.hostname(), devices, worker.alive() ? "yes" : "no",
                  std::to_string(worker.active_leases()),
                  std::to_string(worker.results_reported())});
  }
  table.Print(stdout);
  return kExitOk;
}

int RunBest(const GlobalOptions& global, const BestOptions& options) {
  Result<v1::Problem> problem = kernelspec::ParseProblem(options.problem);
  if (!problem.ok()) return FailUsage(problem.status());
  auto client = Connect(global);
  if (!client.ok()) return Fail(client.status());
  Result<v1::QueryBestResponse> best =
      (*client)->QueryBest(options.kernel, *problem, options.device_class);
  if (!best.ok()) return Fail(best.status());
  if (global.json) {
    PrintJson(client::BestJson(*best));
    return kExitOk;
  }
  std::printf("kernel:   %s on %s\n", best->kernel().c_str(), best->device_class().c_str());
  std::printf("problem:  %s%s\n",
              kernelspec::ProblemText(InOrderOf(*problem, best->problem())).c_str(),
              best->exact() ? "" : "  (nearest tuned problem; this exact one was never tuned)");
  std::printf("config:   %s\n", kernelspec::ConfigKey(best->config()).c_str());
  std::printf("median:   %s (p10 %s, p90 %s)\n", FormatNanos(best->timing().median_ns()).c_str(),
              FormatNanos(best->timing().p10_ns()).c_str(),
              FormatNanos(best->timing().p90_ns()).c_str());
  if (best->timing().gflops() > 0) {
    std::printf("GFLOP/s:  %s\n", FormatGflops(best->timing().gflops()).c_str());
  }
  if (best->confirmed_by_retiming()) {
    std::printf(
        "confirmed: won the re-timing of its job's finalists in alternation (the figures "
        "above)\n");
  }
  std::printf("from:     job %lld, kernel fingerprint %s\n", static_cast<long long>(best->job_id()),
              best->fingerprint().c_str());
  return kExitOk;
}

}  // namespace tf::cli
