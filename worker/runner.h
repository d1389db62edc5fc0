// The runner: loads a lease's artifact and, for each problem of the lease,
// makes the inputs once, runs the reference, then verifies and times every
// candidate on the device's backend (CPU or NVIDIA GPU). It runs inside
// tunefleet-runner, a child of the worker, so that a candidate that crashes
// or hangs takes down only that process.
#pragma once

#include <functional>
#include <memory>

#include "common/status.h"
#include "tunefleet/v1/runner.pb.h"
#include "worker/backend.h"

namespace tf::worker {

namespace v1 = ::tunefleet::v1;

// Receives the runner's events; an error (the worker went away) stops the run.
using EventSink = std::function<Status(const v1::RunnerEvent&)>;

class Runner {
 public:
  // Announces each step (a problem's preparation, a candidate) before taking
  // it, sends each candidate's result after it, and ends with lease_done.
  // Candidates are run grouped by problem, problems in order of first use.
  // Failures of a candidate or a problem become results. Returns sink errors,
  // and kInternal after sending the result of a candidate that left the
  // device unusable (a sticky CUDA error): the process must then exit so
  // that the supervisor starts a fresh one for the candidates left.
  Status Run(const v1::RunnerRequest& request, const EventSink& sink);

 private:
  // Made for the first request's device (vendor and ordinal); a runner
  // process serves one device.
  Result<Backend*> BackendFor(const v1::RunnerRequest& request);

  std::unique_ptr<Backend> backend_;
};

}  // namespace tf::worker
