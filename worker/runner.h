// The runner: loads a lease's artifact and, for each problem of the lease,
// makes the inputs once, runs the reference, then verifies and times every
// candidate. It runs inside tunefleet-runner, a child of the worker, so that
// a candidate that crashes or hangs takes down only that process.
#pragma once

#include <functional>
#include <memory>

#include "common/status.h"
#include "tunefleet/v1/runner.pb.h"
#include "worker/benchmark.h"

namespace tf::worker {

namespace v1 = ::tunefleet::v1;

// Receives the runner's events; an error (the worker went away) stops the run.
using EventSink = std::function<Status(const v1::RunnerEvent&)>;

// The artifact ABI: every candidate symbol and the reference symbol.
using KernelFn = void (*)(void* const* buffers, const int64_t* scalars);

class Runner {
 public:
  // Announces each step (a problem's preparation, a candidate) before taking
  // it, sends each candidate's result after it, and ends with lease_done.
  // Candidates are run grouped by problem, problems in order of first use.
  // Failures of a candidate or a problem become results; only sink errors
  // are returned.
  Status Run(const v1::RunnerRequest& request, const EventSink& sink);

 private:
  std::unique_ptr<CacheFlusher> flusher_;  // kept across requests: allocated once
};

}  // namespace tf::worker
