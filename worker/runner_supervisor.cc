#include "worker/runner_supervisor.h"

#include <poll.h>
#include <signal.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>

#include "common/files.h"
#include "kernelspec/config.h"
#include "runner/lease_artifacts.h"
#include "runner/runner_protocol.h"
#include "tunefleet/v1/runner.pb.h"

namespace tf::worker {
namespace {

// How often should_stop is polled while waiting for the runner.
constexpr int kStopPollMs = 100;

std::string Seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", s);
  return text;
}

// What a crash or hang is blamed on: the step the runner announced last.
struct Blame {
  v1::RunnerStep step;  // neither field set: loading the artifact
  std::string Describe() const {
    if (step.has_candidate_id()) return "while running candidate";
    if (step.has_problem_key()) {
      return "while preparing problem " + step.problem_key() + " (inputs and reference)";
    }
    return "while loading the artifact";
  }
  bool Covers(const v1::LeasedCandidate& candidate) const {
    if (step.has_candidate_id()) return candidate.candidate_id() == step.candidate_id();
    if (step.has_problem_key())
      return kernelspec::ProblemKey(candidate.problem()) == step.problem_key();
    return true;
  }
};

}  // namespace

RunnerSupervisor::RunnerSupervisor(std::string runner_path, Device device, RunnerSandbox sandbox)
    : runner_path_(std::move(runner_path)),
      device_(std::move(device)),
      sandbox_(std::move(sandbox)) {
  // A runner that died must surface as EPIPE on write, not kill the worker.
  static std::once_flag ignore_sigpipe;
  std::call_once(ignore_sigpipe, [] { signal(SIGPIPE, SIG_IGN); });
}

RunnerSupervisor::~RunnerSupervisor() {
  if (runner_ == nullptr) return;
  runner_->CloseStdin();  // the runner exits at end of input
  runner_->Terminate(1.0);
  runner_.reset();
  if (remove_work_dir_) {
    std::error_code ignored;
    std::filesystem::remove_all(sandbox_.work_dir, ignored);
  }
}

Status RunnerSupervisor::EnsureRunner() {
  int wait_status = 0;
  if (runner_ != nullptr && !runner_->Exited(&wait_status)) return Status::Ok();
  if (runner_ != nullptr) {
    spdlog::warn("device {}: runner {} while idle; restarting it", device_.info.index(),
                 DescribeWaitStatus(wait_status));
  }
  if (sandbox_.work_dir.empty()) {
    auto dir = MakeTempDir("tf-runner-");
    if (!dir.ok()) return dir.status();
    sandbox_.work_dir = *dir;
    remove_work_dir_ = true;
  }
  TF_RETURN_IF_ERROR(MakeDirs(sandbox_.work_dir));
  for (size_t n = 0; n < device_.files.size(); ++n) {
    // A copy readable by the runner when it runs as nobody; the original's
    // mode is left alone.
    const std::string staged = sandbox_.work_dir + "/" + runner::DeviceFileName(n);
    std::error_code error;
    std::filesystem::remove(staged, error);
    std::filesystem::copy_file(device_.files[n], staged, error);
    if (!error) {
      std::filesystem::permissions(staged,
                                   std::filesystem::perms::owner_read |
                                       std::filesystem::perms::group_read |
                                       std::filesystem::perms::others_read,
                                   error);
    }
    if (error) {
      return Status::FailedPrecondition("cannot place " + device_.files[n] +
                                        " in the runner's folder " + sandbox_.work_dir + ": " +
                                        error.message());
    }
  }
  std::vector<std::string> argv = {runner_path_, "--work-dir", sandbox_.work_dir};
  if (sandbox_.enabled) {
    argv.insert(argv.end(), {"--sandbox", device_.info.vendor(), "--memory-mb",
                             std::to_string(sandbox_.memory_mb), "--file-mb",
                             std::to_string(sandbox_.file_mb)});
  }
  auto child = ChildProcess::Spawn(argv);
  if (!child.ok()) {
    return Status::FailedPrecondition("cannot start runner '" + runner_path_ +
                                      "': " + child.status().message());
  }
  runner_ = std::move(*child);
  return Status::Ok();
}

Result<std::string> RunnerSupervisor::StageArtifact(const std::string& artifact_path) {
  const std::string name = std::filesystem::path(artifact_path).filename().string();
  const std::string staged = sandbox_.work_dir + "/" + name;
  // Readable by the runner when it runs as nobody, writable by no one. Set on
  // the cached file, never through the staged path: the runner owns its
  // folder and could swap that entry for a link to a file of ours.
  std::error_code error;
  std::filesystem::permissions(artifact_path,
                               std::filesystem::perms::owner_read |
                                   std::filesystem::perms::group_read |
                                   std::filesystem::perms::others_read,
                               error);
  if (!error) {
    std::filesystem::remove(staged, error);
    std::filesystem::create_hard_link(artifact_path, staged, error);
    if (error) std::filesystem::copy_file(artifact_path, staged, error);  // copies the mode too
  }
  if (error) {
    return Status::Internal("cannot place artifact " + artifact_path + " in the runner's folder " +
                            sandbox_.work_dir + ": " + error.message());
  }
  // Relative: the runner's current directory is its work directory, whose
  // parents nobody may not be allowed to search.
  return "./" + name;
}

Status RunnerSupervisor::RunLease(const v1::Lease& lease,
                                  const std::vector<std::string>& artifact_paths,
                                  const ResultCallback& on_result, const StopCheck& should_stop) {
  const double timeout_s = lease.spec().benchmark().timeout_s() > 0
                               ? lease.spec().benchmark().timeout_s()
                               : kDefaultStepTimeoutS;
  const auto step_limit =
      std::chrono::duration_cast<runner::Clock::duration>(std::chrono::duration<double>(timeout_s));
  std::vector<v1::LeasedCandidate> pending(lease.candidates().begin(), lease.candidates().end());
  TF_RETURN_IF_ERROR(EnsureRunner());  // makes the work directory
  // artifact_paths[i] holds artifacts[i]; a restart sends the pending
  // candidates' artifacts only, in their own order (runner/lease_artifacts.h).
  const std::vector<std::string> artifacts = runner::ArtifactOrder(lease);
  std::map<std::string, std::string> staged;  // by artifact
  for (size_t i = 0; i < artifact_paths.size(); ++i) {
    TF_ASSIGN_OR_RETURN(std::string path, StageArtifact(artifact_paths[i]));
    staged[i < artifacts.size() ? artifacts[i] : path] = path;
  }

  // Blames the current step: its candidates get `status` and `error`.
  auto fail_blamed = [&](const Blame& blame, v1::ResultStatus status, const std::string& error) {
    auto blamed = std::stable_partition(pending.begin(), pending.end(),
                                        [&](const auto& c) { return !blame.Covers(c); });
    for (auto it = blamed; it != pending.end(); ++it) {
      v1::CandidateResult result;
      result.set_candidate_id(it->candidate_id());
      result.set_status(status);
      result.set_error(error);
      on_result(std::move(result));
    }
    pending.erase(blamed, pending.end());
  };

  bool restarted_after_write_failure = false;
  while (!pending.empty()) {
    if (should_stop()) return Status(Code::kCancelled, "lease stopped");
    TF_RETURN_IF_ERROR(EnsureRunner());
    v1::RunnerRequest request;
    *request.mutable_lease() = lease;
    request.mutable_lease()->mutable_candidates()->Assign(pending.begin(), pending.end());
    for (const std::string& artifact : runner::ArtifactOrder(request.lease())) {
      if (auto path = staged.find(artifact); path != staged.end()) {
        request.add_artifact_paths(path->second);
      }
    }
    *request.mutable_device() = device_.info;
    request.mutable_cpus()->Assign(device_.cpus.begin(), device_.cpus.end());
    request.set_ordinal(device_.ordinal);
    if (Status sent = runner::WriteMessage(runner_->stdin_fd(), request); !sent.ok()) {
      // The runner died between leases; one fresh start, then give up.
      runner_->Kill();
      runner_.reset();
      if (restarted_after_write_failure) return sent;
      restarted_after_write_failure = true;
      continue;
    }
    restarted_after_write_failure = false;

    Blame blame;
    auto deadline = runner::Clock::now() + step_limit;
    bool lease_done = false;
    while (!lease_done) {
      if (should_stop()) {
        runner_->Kill();
        runner_.reset();
        return Status(Code::kCancelled, "lease stopped");
      }
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - runner::Clock::now())
              .count();
      if (left <= 0) {
        runner_->Kill();
        runner_.reset();
        spdlog::warn("device {}: lease {}: runner timed out {}; restarting it",
                     device_.info.index(), lease.lease_id(), blame.Describe());
        std::string error = "timed out after " + Seconds(timeout_s);
        if (!blame.step.has_candidate_id()) error += " " + blame.Describe();
        fail_blamed(blame, v1::RESULT_STATUS_TIMEOUT, error);
        break;
      }
      pollfd pfd{runner_->stdout_fd(), POLLIN, 0};
      if (poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left, kStopPollMs))) <= 0) continue;

      v1::RunnerEvent event;
      auto read = runner::ReadMessage(runner_->stdout_fd(), &event, deadline);
      if (!read.ok() && read.status().code() == Code::kDeadlineExceeded) continue;
      if (!read.ok() || !*read) {
        // The runner crashed (or garbled its stream): its exit says how.
        const std::string how =
            read.ok() ? DescribeWaitStatus(runner_->Kill())
                      : read.status().message() + "; runner " + DescribeWaitStatus(runner_->Kill());
        runner_.reset();
        spdlog::warn("device {}: lease {}: runner {} {}; restarting it", device_.info.index(),
                     lease.lease_id(), how, blame.Describe());
        fail_blamed(blame, v1::RESULT_STATUS_RUNTIME_FAILED,
                    "runner " + how + " " + blame.Describe());
        break;
      }
      switch (event.kind_case()) {
        case v1::RunnerEvent::kStarted:
          blame.step = event.started();
          deadline = runner::Clock::now() + step_limit;
          break;
        case v1::RunnerEvent::kResult: {
          auto it = std::find_if(pending.begin(), pending.end(), [&](const auto& c) {
            return c.candidate_id() == event.result().candidate_id();
          });
          if (it == pending.end()) break;  // not ours: ignore rather than report twice
          pending.erase(it);
          on_result(std::move(*event.mutable_result()));
          break;
        }
        case v1::RunnerEvent::kLeaseDone: {
          lease_done = true;
          // Every candidate was sent; none should be left. If one is, say so.
          Blame all;
          fail_blamed(all, v1::RESULT_STATUS_RUNTIME_FAILED,
                      "runner finished the lease without a result for this candidate");
          break;
        }
        case v1::RunnerEvent::KIND_NOT_SET:
          break;
      }
    }
  }
  return Status::Ok();
}

}  // namespace tf::worker
