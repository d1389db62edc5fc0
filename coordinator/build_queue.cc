#include "coordinator/build_queue.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <set>
#include <string>

#include "kernelspec/config.h"
#include "vendors/toolchains.h"

namespace tf::coordinator {

BuildQueue::BuildQueue(compiler::ArtifactStore& store, compiler::BuildOptions options,
                       BatchCallback on_batch, Observer& observer)
    : store_(store),
      options_(std::move(options)),
      on_batch_(std::move(on_batch)),
      observer_(observer) {
  thread_ = std::thread([this] { Loop(); });
}

BuildQueue::~BuildQueue() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    cancel_running_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void BuildQueue::Enqueue(BuildTask task) {
  {
    std::lock_guard lock(mu_);
    tasks_.push_back(std::move(task));
  }
  cv_.notify_all();
}

void BuildQueue::CancelJob(int64_t job_id) {
  std::lock_guard lock(mu_);
  std::erase_if(tasks_, [&](const BuildTask& t) { return t.job_id == job_id; });
  if (running_job_ == job_id) cancel_running_ = true;
}

void BuildQueue::Loop() {
  while (true) {
    BuildTask task;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
      if (stopping_) return;
      task = std::move(tasks_.front());
      tasks_.pop_front();
      running_job_ = task.job_id;
      cancel_running_ = false;
    }
    spdlog::info("job {}: building {} configurations", task.job_id, task.configs.size());
    const auto started = std::chrono::steady_clock::now();
    // A build that does not finish (cancelled, or stopped by an error) is
    // counted by the configurations it resolved and its time; its compiler
    // runs are not known (the builder returns no stats then). Batches come
    // one at a time.
    compiler::BuildStats resolved;
    std::set<std::string> resolved_keys;
    auto deliver = [&](std::vector<compiler::ConfigBuild> batch) {
      for (const auto& build : batch) {
        resolved_keys.insert(kernelspec::ConfigKey(build.config));
        if (!build.ok) ++resolved.failed_configs;
      }
      resolved.configs += static_cast<int64_t>(batch.size());
      on_batch_(task.job_id, std::move(batch));
    };
    auto toolchain = vendors::MakeToolchain(task.spec, task.arch);
    Result<compiler::BuildStats> stats = toolchain.status();
    if (toolchain.ok()) {
      compiler::BatchBuilder builder(**toolchain, store_, options_);
      stats = builder.Build(task.spec, task.sources, task.configs, deliver, &cancel_running_);
    }
    if (stats.ok()) {
      if (!stats->note.empty()) spdlog::info("job {}: {}", task.job_id, stats->note);
      observer_.OnBuildFinished(*stats, Observer::BuildSite::kCoordinator);
      spdlog::info(
          "job {}: built {} configurations in {} compiler runs, {:.1f} s wall, {:.1f} "
          "CPU-s, {} failed",
          task.job_id, stats->configs, stats->compiler_runs, stats->wall_seconds,
          stats->cpu_seconds, stats->failed_configs);
    } else {
      if (stats.status().code() == Code::kCancelled) {
        spdlog::info("job {}: build cancelled with {} of {} configurations resolved", task.job_id,
                     resolved.configs, task.configs.size());
      } else {
        // Those it resolved before the error keep their outcome.
        spdlog::error("job {}: build failed: {}", task.job_id, stats.status().message());
        std::vector<compiler::ConfigBuild> failed;
        for (const auto& config : task.configs) {
          if (resolved_keys.contains(kernelspec::ConfigKey(config))) continue;
          compiler::ConfigBuild build;
          build.config = config;
          build.diagnostics = "build failed: " + stats.status().message();
          failed.push_back(std::move(build));
        }
        if (!failed.empty()) deliver(std::move(failed));
      }
      resolved.wall_seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      observer_.OnBuildFinished(resolved, Observer::BuildSite::kCoordinator);
    }
    std::lock_guard lock(mu_);
    running_job_ = 0;
  }
}

}  // namespace tf::coordinator
