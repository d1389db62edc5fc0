// The tuning database: jobs, their candidates, compiled builds, every
// candidate's result, the best configuration per (kernel fingerprint,
// problem, device class), registered workers and leases. In an SQLite file
// or on a PostgreSQL server (db/database.h), with the same schema and SQL.
//
// Not thread-safe: the coordinator serialises access. Callers group related
// writes with Begin() so that a state change is stored whole or not at all.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "db/database.h"
#include "tunefleet/v1/tunefleet.pb.h"
#include "tunefleet/v1/worker.pb.h"

namespace tf::db {

namespace v1 = ::tunefleet::v1;

struct JobRow {
  int64_t id = 0;
  std::string kernel;
  std::string fingerprint;
  v1::KernelSpec spec;
  std::vector<v1::SourceFile> sources;
  v1::JobState state = v1::JOB_STATE_QUEUED;
  int priority = 0;
  std::string device_class;
  std::string error;
  int64_t candidates_total = 0;
  int64_t candidates_done = 0;
  int64_t candidates_failed = 0;
  int64_t candidates_cached = 0;
  int64_t created_ms = 0;
  int64_t updated_ms = 0;
  int64_t owner_token = 0;  // the submitter's token; 0: anonymous
  int64_t started_ms = 0;   // when it was bound to a device class; 0: not yet
  std::string stop_reason;  // why its search stopped proposing
  // The compiler it is measured with when its workers compile it (set when
  // it is bound); empty: the coordinator compiles it, or not known.
  std::string toolchain;
  int64_t configurations = 0;  // distinct configurations to build
  int64_t builds_done = 0;
};

enum class CandidateState { kWaitingBuild = 0, kReady = 1, kLeased = 2, kDone = 3 };

struct CandidateRow {
  int64_t id = 0;
  int64_t job_id = 0;
  std::string config_key;
  std::string problem_text;  // variables in spec order: "M=256,N=256,K=256"
  CandidateState state = CandidateState::kWaitingBuild;
  int64_t lease_id = 0;
};

struct BuildRow {
  std::string config_key;
  bool ok = false;
  std::string artifact_sha256;
  std::string symbol;
  std::string diagnostics;
  std::string reference_symbol;
  v1::ResourceUsage resources;
};

struct ResultRow {
  int64_t candidate_id = 0;
  int64_t job_id = 0;
  std::string fingerprint;
  std::string config_key;
  std::string problem_key;
  std::string problem_text;  // filled when listing
  std::string device_class;
  std::string worker;
  bool cached = false;
  v1::ResultStatus status = v1::RESULT_STATUS_UNSPECIFIED;
  std::string error;
  v1::TimingStats timing;
  double max_abs_error = 0;
  v1::ResourceUsage resources;
  int64_t created_ms = 0;  // filled when reading: when it was recorded
  // Set by SetRetiming: a finalist's re-timing, and whether it won it.
  v1::TimingStats retiming;
  bool retime_winner = false;
};

// The figure a result answers with: its re-timing when it won one.
inline const v1::TimingStats& AnsweringTiming(const ResultRow& r) {
  return r.retime_winner ? r.retiming : r.timing;
}

struct BestRow {
  std::string kernel;
  std::string fingerprint;
  int64_t fingerprint_created_ms = 0;
  std::string problem_key;
  std::string device_class;
  ResultRow result;
};

// A fingerprint with a completed tuning on a device class: a job of it
// that succeeded there (imported results are such a job).
struct CompletedTuning {
  std::string kernel;
  std::string fingerprint;
  int64_t fingerprint_created_ms = 0;
  std::string device_class;
  int64_t completed_ms = 0;  // when it ended; of several such jobs, the newest
};

// A token that submitted jobs under a kernel name since its owner was last
// set (KernelOwnerRow), with the first of them.
struct KernelSubmitter {
  std::string kernel;
  int64_t token_id = 0;
  int64_t first_job_id = 0;
};

// A kernel name's owner as an admin last set it.
struct KernelOwnerRow {
  std::string kernel;
  std::string team;       // a token name; empty: no one
  int64_t since_job = 0;  // the jobs up to this id no longer claim the name
};

struct WorkerRow {
  std::string id;
  std::string hostname;
  std::vector<v1::DeviceInfo> devices;
  int64_t registered_ms = 0;
  int64_t owner_token = 0;  // the token it registered with; 0: anonymous
  // Its last heartbeat, stored once it was found silent (for one known from
  // before a restart that has not registered since, that start); 0: heard
  // from since it registered.
  int64_t silent_since_ms = 0;
  // Silent past the retention with no lease: kept only so that its id keeps
  // its owner (out of listings, loaded but not registered); false again
  // when it registers again.
  bool forgotten = false;
};

// A bearer token: its public description and the SHA-256 of its text. The
// text itself is never stored.
struct TokenRow {
  v1::TokenInfo info;
  std::string hash;
};

struct LeaseRow {
  int64_t id = 0;
  int64_t job_id = 0;
  std::string worker_id;
  int device_index = 0;
  std::string artifact_sha256;
  std::vector<int64_t> candidate_ids;  // filled when loading
};

class TuningDb {
 public:
  // Opens or creates the database at `location` (a file, or a PostgreSQL
  // URI: Database::Open), becomes its only writer, waiting as a standby
  // while another coordinator is (Database::HoldAsOnlyWriter, which calls
  // `standing_by` before it waits), and migrates it to the latest schema.
  // `synchronous_full`: every commit is durable.
  static Result<std::unique_ptr<TuningDb>> Open(const std::string& location,
                                                bool synchronous_full = true,
                                                const std::function<Status()>& standing_by = {});

  Database& database() { return *db_; }
  // A transaction over this database; commit it to keep the writes.
  // `fsync` false: see Transaction.
  std::unique_ptr<Transaction> Begin(bool fsync = true) {
    return std::make_unique<Transaction>(*db_, fsync);
  }

  // Records the kernel fingerprint the first time it is seen; returns when.
  Result<int64_t> EnsureKernel(const std::string& fingerprint, const std::string& name,
                               int64_t now_ms);

  Status InsertJob(JobRow& job);  // sets job.id
  // Stores state, device class, error, counters, updated_ms, and the
  // fingerprint and compiler a job compiled on its workers gets when bound.
  Status UpdateJob(const JobRow& job);
  Result<std::optional<JobRow>> GetJob(int64_t id);
  // Newest first; `unfinished_only` keeps queued and running jobs, `owner`
  // (when set) the jobs of that token.
  Result<std::vector<JobRow>> LoadJobs(bool unfinished_only, int limit,
                                       std::optional<int64_t> owner = std::nullopt);

  Status InsertCandidates(std::vector<CandidateRow>& candidates);  // sets ids
  Status SetCandidateState(const std::vector<int64_t>& ids, CandidateState state, int64_t lease_id);
  Result<std::vector<CandidateRow>> LoadCandidates(int64_t job_id);

  // Builds of one kernel for one target, by configuration key.
  Result<std::map<std::string, BuildRow>> LoadBuilds(const std::string& fingerprint,
                                                     const std::string& target);
  Status PutBuild(const std::string& fingerprint, const std::string& target, const BuildRow& build);

  // false when the candidate already has a result (it is not replaced).
  Result<bool> InsertResult(const ResultRow& result);
  // The results of a job recorded at or after `since_ms` (0: every one); OK
  // results first (re-timing winners first, then by median time), then the
  // rest.
  Result<std::vector<ResultRow>> ListResults(int64_t job_id, int64_t since_ms = 0);
  // Earlier results of this kernel on this device class, for reuse.
  Result<std::vector<ResultRow>> FindResults(const std::string& fingerprint,
                                             const std::string& device_class);

  // A finalist's re-timing in alternation, and whether it won it.
  Status SetRetiming(int64_t candidate_id, const v1::TimingStats& retiming, bool winner);

  // The best result is kept per (kernel, fingerprint, problem, device class):
  // two kernels of one source share results but not their best.
  // Keeps `result` as the kernel's best of its (fingerprint, problem, device
  // class) when it is faster than the one stored; true when it became the best.
  Result<bool> OfferBest(const std::string& kernel, const ResultRow& result, int64_t now_ms);
  // Makes `result` that best, faster or not: the winner of a re-timing,
  // `result.timing` its figure.
  Status PutBest(const std::string& kernel, const ResultRow& result, int64_t now_ms);
  // Makes `result` that best where the kernel has none: another kernel's
  // best of the same source. True when it became the best.
  Result<bool> InheritBest(const std::string& kernel, const ResultRow& result, int64_t now_ms);
  Result<std::vector<BestRow>> LoadBest();
  // The rows of one fingerprint on one device class, of every kernel.
  Result<std::vector<BestRow>> LoadBest(const std::string& fingerprint,
                                        const std::string& device_class);
  Result<std::vector<CompletedTuning>> LoadCompletedTunings();
  // Every (kernel, token) with a job after the kernel's since_job (when its
  // owner was set), jobs of no token left out, by first such job.
  Result<std::vector<KernelSubmitter>> LoadKernelSubmitters();
  // The newest job under the kernel name, imports included; 0: none.
  Result<int64_t> LastJobOf(const std::string& kernel);
  // Adds or replaces the kernel's row.
  Status PutKernelOwner(const KernelOwnerRow& owner);
  Result<std::vector<KernelOwnerRow>> LoadKernelOwners();
  // Each problem's best OK result of a job: the winner of its finalists'
  // re-timing, else the fastest.
  Result<std::vector<ResultRow>> JobBest(int64_t job_id);

  Status PutWorker(const WorkerRow& worker);
  // Every stored worker, forgotten ones included.
  Result<std::vector<WorkerRow>> LoadWorkers();
  // The results recorded from the worker's reports (not the copies later
  // jobs reused).
  Result<int64_t> CountWorkerResults(const std::string& worker_id);

  Status InsertToken(const TokenRow& token);  // with its id set by the caller
  Status RevokeToken(int64_t token_id, int64_t now_ms);
  Result<std::vector<TokenRow>> LoadTokens();

  Status InsertLease(LeaseRow& lease);  // sets lease.id
  Status EndLease(int64_t lease_id);
  // Active leases with the candidates still leased under them.
  Result<std::vector<LeaseRow>> LoadActiveLeases();

 private:
  explicit TuningDb(std::unique_ptr<Database> db) : db_(std::move(db)) {}
  enum class BestUpdate { kAlways, kIfFaster, kIfAbsent };
  // LoadBest's query, `where` appended with its values bound in order.
  Result<std::vector<BestRow>> QueryBest(const std::string& where,
                                         const std::vector<std::string>& values);
  // OfferBest, PutBest and InheritBest; true when the row changed.
  Result<bool> UpsertBest(const std::string& kernel, const ResultRow& result, int64_t now_ms,
                          BestUpdate update);
  std::unique_ptr<Database> db_;
};

}  // namespace tf::db
