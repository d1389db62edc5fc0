#include "worker/result_reporter.h"

#include <spdlog/spdlog.h>

#include "common/backoff.h"

namespace tf::worker {
namespace {

constexpr int kMaxResultsPerRequest = 256;

}  // namespace

ResultReporter::ResultReporter(Send send, OnJobCancelled on_job_cancelled, size_t max_queued)
    : send_(std::move(send)),
      on_job_cancelled_(std::move(on_job_cancelled)),
      max_queued_(max_queued),
      thread_([this] { SendLoop(); }) {}

ResultReporter::~ResultReporter() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void ResultReporter::Add(int64_t lease_id, int32_t device_index, v1::CandidateResult result) {
  std::unique_lock lock(mu_);
  changed_.wait(lock, [this] { return queued_results_ < max_queued_ || stopping_; });
  queue_.push_back({lease_id, device_index, std::move(result), {}});
  ++queued_results_;
  changed_.notify_all();
}

void ResultReporter::FinishLease(int64_t lease_id, int32_t device_index,
                                 std::vector<v1::WorkerBuild> builds) {
  std::lock_guard lock(mu_);
  queue_.push_back({lease_id, device_index, std::nullopt, std::move(builds)});
  changed_.notify_all();
}

void ResultReporter::RetryNow() {
  std::lock_guard lock(mu_);
  retry_now_ = true;
  changed_.notify_all();
}

size_t ResultReporter::Drain(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  changed_.wait_for(lock, timeout, [this] { return queue_.empty(); });
  return queued_results_;
}

void ResultReporter::SendLoop() {
  Backoff backoff(std::chrono::milliseconds(100), std::chrono::seconds(5));
  int failures = 0;
  std::unique_lock lock(mu_);
  while (true) {
    changed_.wait(lock, [this] { return !queue_.empty() || stopping_; });
    if (stopping_) return;

    // One request: the oldest lease's queued results, up to its end.
    v1::ReportResultsRequest request;
    request.set_lease_id(queue_.front().lease_id);
    request.set_device_index(queue_.front().device_index);
    std::list<Item> batch;
    for (auto it = queue_.begin(); it != queue_.end() && !request.lease_finished();) {
      auto item = it++;
      if (item->lease_id != request.lease_id()) continue;
      if (item->result.has_value()) {
        if (request.results_size() == kMaxResultsPerRequest) break;
        *request.add_results() = *item->result;
      } else {
        request.set_lease_finished(true);
        for (const v1::WorkerBuild& build : item->builds) *request.add_builds() = build;
      }
      batch.splice(batch.end(), queue_, item);
    }

    lock.unlock();
    Result<v1::ReportResultsResponse> response = send_(request);
    lock.lock();
    if (!response.ok() && response.status().code() == Code::kPermissionDenied) {
      // Retrying cannot help: the coordinator says these results are not
      // this worker's to report (e.g. a lease of another token's worker).
      spdlog::error("dropping {} results of lease {}: {}", request.results_size(),
                    request.lease_id(), response.status().message());
      queued_results_ -= request.results_size();
      changed_.notify_all();
      continue;
    }
    if (!response.ok()) {
      // Back to the front, in order; retried after a pause.
      queue_.splice(queue_.begin(), batch);
      if (failures++ % 10 == 0) {
        spdlog::warn("cannot report {} results of lease {}: {}; retrying", request.results_size(),
                     request.lease_id(), response.status().message());
      }
      changed_.wait_for(lock, backoff.Next(), [this] { return stopping_ || retry_now_; });
      retry_now_ = false;
      continue;
    }
    if (failures > 0) spdlog::info("reporting results again after {} failed attempts", failures);
    failures = 0;
    retry_now_ = false;
    backoff.Reset();
    queued_results_ -= request.results_size();
    changed_.notify_all();
    if (response->job_cancelled()) {
      lock.unlock();
      on_job_cancelled_(request.lease_id());
      lock.lock();
    }
  }
}

}  // namespace tf::worker
