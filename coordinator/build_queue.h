// Builds the configurations of jobs in the background, one job's build at a
// time (each build is itself parallel across compiler processes), so that
// the coordinator never compiles on an RPC thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "compiler/artifact_store.h"
#include "compiler/batch_builder.h"
#include "coordinator/observer.h"

namespace tf::coordinator {

namespace v1 = ::tunefleet::v1;

struct BuildTask {
  int64_t job_id = 0;
  v1::KernelSpec spec;
  std::vector<v1::SourceFile> sources;
  std::vector<v1::Config> configs;
  std::string arch;  // of the device class the job is bound to
};

class BuildQueue {
 public:
  // Each finished batch, and the configurations of a task that an error
  // stopped (`diagnostics` set: each it had not resolved failed with it).
  // The observer is told of every task that started building (observer.h).
  using BatchCallback = std::function<void(int64_t job_id, std::vector<compiler::ConfigBuild>)>;

  BuildQueue(compiler::ArtifactStore& store, compiler::BuildOptions options, BatchCallback on_batch,
             Observer& observer);
  ~BuildQueue();  // stops after the compiler runs in flight

  void Enqueue(BuildTask task);
  // Drops queued work of the job and stops its running build early.
  void CancelJob(int64_t job_id);

 private:
  void Loop();

  compiler::ArtifactStore& store_;
  compiler::BuildOptions options_;
  BatchCallback on_batch_;
  Observer& observer_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<BuildTask> tasks_;
  int64_t running_job_ = 0;
  std::atomic<bool> cancel_running_{false};
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace tf::coordinator
