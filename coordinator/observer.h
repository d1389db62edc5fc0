// What the coordinator tells an observer as it works: the events metrics
// count (web/metrics.h). Calls come from the coordinator's threads, most
// with its lock held, after the change they report was committed: an
// observer must be quick and thread-safe, and must not call back into the
// coordinator. The default observes nothing.
#pragma once

#include <cstdint>
#include <string>

#include "compiler/batch_builder.h"
#include "db/tuning_db.h"

namespace tf::coordinator {

class Observer {
 public:
  virtual ~Observer() = default;

  // Where a build ran: here, or on a worker (compile_on: worker), which
  // reports it with its lease's end.
  enum class BuildSite { kCoordinator, kWorker };
  // A build ended. Here, a job's: every configuration it was given built or
  // failed; or it was cancelled, or an error stopped it, and `stats` counts
  // the configurations it resolved (those an error left failed with it),
  // its wall time and no compiler runs (not known then). On a worker, one
  // batch of a job built for a device's architecture, as the worker says.
  virtual void OnBuildFinished(const compiler::BuildStats&, BuildSite) {}
  // AcquireLease granted a lease `waited_ms` after the call came in (the
  // long poll for work included).
  virtual void OnLeaseAcquired(int64_t /*waited_ms*/) {}
  // A lease began (granted, or resumed at start) or ended (all reported,
  // expired, or its job cancelled): its device is busy in between.
  virtual void OnLeaseStarted(int64_t /*lease_id*/, const std::string& /*worker_id*/,
                              int /*device_index*/) {}
  virtual void OnLeaseEnded(int64_t /*lease_id*/) {}
  // A result row was committed to the tuning database: reported by a
  // worker, found at build time (compile failures, pruned) or reused from
  // an earlier job (row.cached).
  virtual void OnResultRecorded(const db::ResultRow&) {}
  // A result of `tunefleet import results` was committed: measured elsewhere.
  virtual void OnResultImported(const db::ResultRow&) {}
};

}  // namespace tf::coordinator
