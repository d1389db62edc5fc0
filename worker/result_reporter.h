// Delivers candidate results to the coordinator from a thread of its own, so
// that benchmarking never waits on the network. Results of one lease are
// batched; a failed delivery is retried with backoff until it succeeds:
// results are never dropped while the worker runs, except those the
// coordinator refuses with PERMISSION_DENIED, which no retry would change.
// Memory is bounded: Add blocks while max_queued results wait.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <list>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "common/status.h"
#include "tunefleet/v1/worker.pb.h"

namespace tf::worker {

namespace v1 = ::tunefleet::v1;

class ResultReporter {
 public:
  // Sends one request (the caller fills in worker_id).
  using Send = std::function<Result<v1::ReportResultsResponse>(v1::ReportResultsRequest&)>;
  // Called when the coordinator answers that a lease's job was cancelled.
  using OnJobCancelled = std::function<void(int64_t lease_id)>;

  ResultReporter(Send send, OnJobCancelled on_job_cancelled, size_t max_queued = 10000);
  // Stops; whatever is still queued is lost (Drain first).
  ~ResultReporter();

  void Add(int64_t lease_id, int32_t device_index, v1::CandidateResult result);
  // Queues the end of a lease, sent with lease_finished after its results,
  // with the builds the worker ran for it.
  void FinishLease(int64_t lease_id, int32_t device_index,
                   std::vector<v1::WorkerBuild> builds = {});
  // Ends the pause after a failed delivery: the coordinator answers again.
  void RetryNow();
  // Waits until everything queued is delivered or `timeout` passes; returns
  // the number of results left undelivered.
  size_t Drain(std::chrono::milliseconds timeout);

 private:
  struct Item {
    int64_t lease_id;
    int32_t device_index;
    std::optional<v1::CandidateResult> result;  // none: the lease's end
    std::vector<v1::WorkerBuild> builds;        // the lease's end's
  };

  void SendLoop();

  const Send send_;
  const OnJobCancelled on_job_cancelled_;
  const size_t max_queued_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::list<Item> queue_;
  size_t queued_results_ = 0;
  bool stopping_ = false;
  bool retry_now_ = false;
  std::thread thread_;
};

}  // namespace tf::worker
