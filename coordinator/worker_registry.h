// The workers registered with the coordinator, by id: their devices, the
// token that registered each, when each was last heard from and how many
// results it reported. A worker is alive while heard from in the last three
// heartbeat intervals (its devices bind jobs); expired once silent for a
// lease TTL (it must register again before it gets new leases); forgotten
// once expired and silent for the retention while it holds no lease: out of
// the listing, its results stay, and its id keeps the token that owns it,
// for good, so that only that token registers under the id again (keeping
// its results count) or reports for the candidates once leased to it.
//
// Database: a registration stores the worker's row before it is kept here.
// When an expired worker went silent is stored once, and a forgotten
// worker's row is marked forgotten (WorkerRow::forgotten), neither fsynced
// (what a power loss undoes is done again). Heartbeats stay in memory.
//
// Not locked itself: the Coordinator's mutex guards it, as it guards the
// rest of the coordinator's state, and is held on every call.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "auth/roles.h"
#include "common/status.h"
#include "db/tuning_db.h"
#include "tunefleet/v1/tunefleet.pb.h"
#include "tunefleet/v1/worker.pb.h"

namespace tf::coordinator {

namespace v1 = ::tunefleet::v1;

class WorkerRegistry {
 public:
  // The coordinator's (CoordinatorOptions), each set by the caller.
  struct Options {
    int64_t heartbeat_interval_ms;  // alive: heard from in the last three
    int64_t lease_ttl_ms;           // silent this long: expired
    int64_t retention_ms;           // expired, silent this long and leaseless: forgotten
  };
  struct Worker {
    db::WorkerRow row;
    int64_t last_heartbeat_ms = 0;
    // Its results in the database (re-timings are not results of their own),
    // counted there when it was loaded or came back after being forgotten.
    int64_t results_reported = 0;
    // Silent for a lease TTL: its leases went to others, and it must
    // register again before it gets new ones.
    bool expired = false;
  };
  // How many leases the worker holds: the coordinator keeps the leases.
  using LeasesOf = std::function<int64_t(const std::string& worker_id)>;

  // The workers `db` knows, each expired (asked to register again before it
  // gets new leases) with the count of its results there, and the owners of
  // the forgotten ones. `db` must outlive the registry.
  static Result<std::unique_ptr<WorkerRegistry>> Load(db::TuningDb& db, const Options& options);

  // The registered workers; forgotten ones are not among them.
  const std::map<std::string, Worker>& workers() const { return workers_; }
  // Heard from in the last three heartbeat intervals: its devices bind jobs.
  bool Alive(const Worker& worker, int64_t now) const;
  // kPermissionDenied when an own_only caller names a worker of another
  // token, registered or forgotten; OK for an id no worker ever had (the
  // caller reports that, or registers under it and so owns it).
  Status CheckOwner(const std::string& worker_id, const auth::Caller& caller) const;
  // The device of a registered worker that has not expired, or null.
  const v1::DeviceInfo* FindDevice(const std::string& worker_id, int device_index) const;
  std::vector<v1::WorkerInfo> List(int64_t now, const LeasesOf& leases_of) const;

  // Stores and keeps the worker, owned by `owner_token`, alive and not
  // expired: under request.previous_worker_id() when set, keeping its results
  // count (counted in the database when it was forgotten), else under a new
  // id made of its hostname that no worker had. Returns its id. Whether the
  // caller may take the previous id is CheckOwner's to say.
  Result<std::string> Register(const v1::RegisterRequest& request, int64_t owner_token);
  // Stamps the heartbeat of a registered worker that has not expired; false
  // when it must register again.
  bool Heartbeat(const std::string& worker_id, int64_t now);
  // A sign of life other than a heartbeat (asking for a lease, reporting
  // results), stamped expired or not; an unknown worker is ignored.
  void HeardFrom(const std::string& worker_id, int64_t now);
  // Adds results the worker reported to its count; an unknown worker is ignored.
  void CountResults(const std::string& worker_id, int64_t recorded);
  // Expires the workers silent for a lease TTL; returns their ids.
  std::vector<std::string> ExpireSilent(int64_t now);
  // Stores when each expired worker went silent, once, and forgets those
  // silent for the retention that hold no lease (their ids keep their
  // owners). A failed write is logged and done again on the next call.
  void ForgetSilent(int64_t now, const LeasesOf& leases_of);

 private:
  WorkerRegistry(db::TuningDb& db, const Options& options) : db_(db), options_(options) {}

  // Stores `rows` in one transaction, not fsynced: what a power loss undoes
  // is done again on the next call.
  Status StoreUnsynced(const std::vector<db::WorkerRow>& rows);

  // Registered or forgotten: an id that a new worker must not get.
  bool Known(const std::string& worker_id) const {
    return workers_.count(worker_id) > 0 || forgotten_.count(worker_id) > 0;
  }

  db::TuningDb& db_;
  const Options options_;
  std::map<std::string, Worker> workers_;
  // The forgotten workers' ids and the tokens that own them: what CheckOwner
  // checks once the worker is out of workers_.
  std::map<std::string, int64_t> forgotten_;
  int64_t next_worker_seq_ = 1;  // ends a new worker's id
};

}  // namespace tf::coordinator
