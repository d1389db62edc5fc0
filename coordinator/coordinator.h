// The coordinator's state machine: jobs, their candidates and builds, workers,
// leases and results. The gRPC services (grpc_services.h) are thin adapters
// over this class, which tests can also drive directly.
//
// Durability: every change is written to the tuning database in one
// transaction before memory is updated and before the caller is answered; a
// coordinator constructed on an existing database resumes every unfinished
// job where it stood. Thread-safe.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "auth/roles.h"
#include "auth/token_index.h"
#include "compiler/artifact_store.h"
#include "compiler/toolchain.h"
#include "coordinator/best_index.h"
#include "coordinator/build_queue.h"
#include "coordinator/kernel_owners.h"
#include "coordinator/observer.h"
#include "coordinator/search_driver.h"
#include "coordinator/worker_registry.h"
#include "db/tuning_db.h"
#include "kernelspec/validate.h"
#include "tunefleet/v1/results.pb.h"
#include "tunefleet/v1/tunefleet.pb.h"
#include "tunefleet/v1/worker.pb.h"

namespace tf::coordinator {

struct CoordinatorOptions {
  std::string db_path;
  std::string artifact_dir;
  bool db_synchronous_full = true;
  int64_t heartbeat_interval_ms = 1000;
  // A lease not renewed by a heartbeat for this long goes to another worker.
  int64_t lease_ttl_ms = 10000;
  // A worker silent for this long with no lease is forgotten (ListWorkers
  // and the database); its results stay, and it registers again under its
  // id if it comes back. Restarted workers register under new ids: without
  // it the old ones would be listed for ever.
  int64_t worker_retention_ms = 24 * 60 * 60 * 1000;
  int max_lease_candidates = 32;
  int build_batch_size = 16;
  int build_parallelism = 0;  // 0: one per core
  double build_timeout_s = 120;
  kernelspec::SpecLimits limits;
  // Queued and running jobs at once; a submission past it is refused with
  // RESOURCE_EXHAUSTED. 0: no limit.
  int64_t max_jobs_in_flight = 64;
  // The same, for the jobs of one token (anonymous submissions have only
  // the limit above).
  int64_t max_jobs_in_flight_per_token = 16;
  // Told of builds, leases and results (metrics); must outlive the
  // coordinator. Null: no one.
  Observer* observer = nullptr;
  // Called by Start once, before it waits as a standby for another
  // coordinator's database (PostgreSQL); an error ends the start. Empty: none.
  std::function<Status()> standing_by;
};

// What the fleet is doing now: a read-only view for the dashboard and the
// metrics (web/).
struct Activity {
  struct Lease {
    int64_t lease_id = 0;
    int64_t job_id = 0;
    int64_t owner_token = 0;  // the job's submitter's token; 0: anonymous
    std::string kernel;
    std::string worker_id;
    int device_index = 0;
    int64_t candidates = 0;
    int64_t granted_unix_ms = 0;
    bool backup = false;
  };
  std::vector<Lease> leases;  // active, by id
  // Candidates built and waiting for a lease: the queue depth.
  int64_t candidates_ready = 0;
  int64_t candidates_waiting_build = 0;
  // Jobs by state: every unfinished job, and those that ended since this
  // coordinator started.
  std::map<v1::JobState, int64_t> jobs;
};

// A job whose strategy learns is asked for this many configurations per live
// device of its class at a time (coordinator/search_driver.h).
inline constexpr size_t kProposalsPerDevice = 8;

class Coordinator {
 public:
  static Result<std::unique_ptr<Coordinator>> Start(const CoordinatorOptions& options);
  ~Coordinator();

  // Every call names its caller (auth/roles.h): jobs and workers record the
  // token that made them, and a caller with own_only set may act on those
  // only (kPermissionDenied otherwise). The default caller may do anything.

  // Client-facing.
  Result<v1::Job> Submit(const v1::SubmitJobRequest& request, const auth::Caller& caller = {});
  Result<v1::Job> GetJob(int64_t job_id, const auth::Caller& caller = {});
  // Calls `on_change` with the job now and on every change until the job
  // ends, `on_change` returns false, or `cancelled` becomes true (asked at
  // least every 500 ms; nothing more is sent then).
  Status WatchJob(int64_t job_id, const std::function<bool(const v1::Job&)>& on_change,
                  const std::function<bool()>& cancelled, const auth::Caller& caller = {});
  Result<v1::Job> Cancel(int64_t job_id, const auth::Caller& caller = {});
  // An own_only caller gets its own jobs only.
  Result<std::vector<v1::Job>> ListJobs(int limit, const auth::Caller& caller = {});
  Result<std::vector<v1::CandidateResult>> ListResults(int64_t job_id,
                                                       const auth::Caller& caller = {});
  // The same, each with when it was recorded (the dashboard's plots
  // against time).
  struct RecordedResult {
    v1::CandidateResult result;
    int64_t recorded_unix_ms = 0;
  };
  // Those recorded at or after `since_ms` (0: every one), for a page that
  // follows a running job.
  Result<std::vector<RecordedResult>> ListRecordedResults(int64_t job_id,
                                                          const auth::Caller& caller = {},
                                                          int64_t since_ms = 0);
  v1::QueryBestResponse QueryBest(const v1::QueryBestRequest& request) const;
  // Results recorded elsewhere, stored whole as a finished job of their own
  // (coordinator_import.cc), or nothing and kInvalidArgument naming the field.
  Result<v1::ImportResultsResponse> ImportResults(const v1::ImportResultsRequest& request);
  std::vector<v1::QueryBestResponse> ListBest(const v1::ListBestRequest& request) const;
  // The kernels ListBest answers for, by name, each with its owner
  // (KernelOwners).
  std::vector<v1::TunedKernel> ListKernels(const v1::ListKernelsRequest& request);
  std::vector<v1::WorkerInfo> ListWorkers();
  Activity CurrentActivity();

  // Worker-facing. An own_only caller may re-register, heartbeat and take
  // leases for the workers its token registered only, and report results
  // only for candidates leased to the worker it names.
  Result<v1::RegisterResponse> Register(const v1::RegisterRequest& request,
                                        const auth::Caller& caller = {});
  Result<v1::HeartbeatResponse> Heartbeat(const v1::HeartbeatRequest& request,
                                          const auth::Caller& caller = {});
  // Waits up to request.wait_ms for work; `abandoned` says the worker hung up
  // (killed while it waited): such a call takes no work and binds no job.
  Result<v1::AcquireLeaseResponse> AcquireLease(const v1::AcquireLeaseRequest& request,
                                                const auth::Caller& caller = {},
                                                const std::function<bool()>& abandoned = {});
  Result<v1::ReportResultsResponse> ReportResults(const v1::ReportResultsRequest& request,
                                                  const auth::Caller& caller = {});
  // Path of a stored artifact, checked against its hash.
  Result<std::string> ArtifactPath(const std::string& sha256) const;

  // Tokens (coordinator_tokens.cc): stored as hashes, each change committed
  // before the in-memory index that checks calls is updated.
  const auth::TokenIndex& tokens() const { return tokens_; }
  Result<v1::CreateTokenResponse> CreateToken(const v1::CreateTokenRequest& request);
  std::vector<v1::TokenInfo> ListTokens() const { return tokens_.List(); }
  // The token of --admin-token-file (EnsureAdminToken) is not revoked:
  // kFailedPrecondition, since the coordinator would not start again.
  Result<v1::TokenInfo> RevokeToken(int64_t token_id);
  // Makes `token` (the text of an admin token, e.g. from --admin-token-file)
  // valid: stored when the database does not know its id (and its secret has
  // at least 32 characters), kFailedPrecondition when it knows that id as
  // another token, a revoked one or a non-admin.
  Status EnsureAdminToken(const std::string& token);
  // Hands a kernel name to a team, the name of a submitter token in force,
  // or to no one (team empty): stored, then in force for the next
  // submission (KernelOwners). kNotFound when no job or import is under the
  // name, or no such submitter token exists.
  Result<v1::SetKernelOwnerResponse> SetKernelOwner(const v1::SetKernelOwnerRequest& request);

 private:
  struct Candidate {
    int64_t id = 0;
    int64_t job_id = 0;
    v1::Config config;
    std::string config_key;
    v1::Problem problem;
    std::string problem_key;
    int problem_index = 0;  // in spec.problems
    db::CandidateState state = db::CandidateState::kWaitingBuild;
    int64_t lease_id = 0;
    std::string artifact_sha256;
    std::string symbol;
    std::string reference_symbol;
    v1::ResourceUsage resources;
    // Every worker it was leased to since this coordinator started (or, for
    // leases active then, since they were granted): who may report it.
    std::vector<std::string> leased_to;
  };
  // A candidate to add to a bound job, with its result when already known.
  struct NewCandidate {
    int problem = 0;
    v1::Config config;
    std::optional<db::ResultRow> earlier;
  };
  struct Job {
    db::JobRow row;
    // When its fingerprint was first seen: the best index prefers the newest.
    int64_t fingerprint_created_ms = 0;
    std::string target;  // the architecture the toolchain compiles for
    // For `device`: its target and its resource check. Null when the
    // workers build (their toolchains check resources).
    std::shared_ptr<const compiler::Toolchain> toolchain;
    bool build_on_worker = false;  // leases carry BuildBundles
    bool workers_compile = false;  // known at submission: fingerprinted as such
    v1::DeviceInfo device;         // a device of the bound class: arch and limits
    std::deque<int64_t> ready;     // candidate ids, in build order
    std::vector<int64_t> candidate_ids;
    int active_leases = 0;
    // Leases finished by their workers, their total time from grant to the
    // last report and their candidates: what a lease of this job normally
    // takes, and a candidate.
    int64_t leases_finished = 0;
    int64_t lease_ms_total = 0;
    int64_t lease_candidates_total = 0;
    uint64_t last_lease_seq = 0;  // when it last got a lease, in grants
    uint64_t version = 0;         // bumped on every change, for watchers
    // Running with no live device that serves it (LiveDevicesLocked): its
    // Job.waiting_for says so. Kept to tell watchers when it changes.
    bool stranded = false;
    // Once bound: what to evaluate next, and the spec's problems by key.
    std::unique_ptr<SearchDriver> search;
    std::map<std::string, int> problem_index;
    std::set<std::string> config_keys;  // of its candidates
    std::set<std::string> building;     // configurations sent to be built
    // build_on_worker: the bundle each configuration was packed in, by key.
    std::map<std::string, std::string> worker_bundles;
    // Proposed, but not stored yet: a write failed; the reaper retries.
    std::vector<NewCandidate> unstored;
    // Once the search is done and every candidate has its result: each
    // problem's finalists timed again (coordinator/finalists.h), by problem
    // index, until their lease reports. Chosen once per coordinator run: a
    // restarted coordinator re-times the job again.
    struct Retime {
      std::vector<int64_t> finalists;  // candidate ids, fastest first
      int64_t lease_id = 0;            // 0: waiting for a device
      std::vector<v1::CandidateResult> reported;
      // Each takeover doubles the time the next device is given: a
      // re-timing longer than the estimate still ends.
      int takeovers = 0;
    };
    std::map<int, Retime> retimes;
    bool finalists_chosen = false;
  };
  struct Lease {
    int64_t id = 0;
    int64_t job_id = 0;
    std::string worker_id;
    int device_index = 0;
    std::string artifact_sha256;
    std::vector<int64_t> candidate_ids;
    int64_t deadline_ms = 0;
    int64_t granted_ms = 0;
    // A backup runs a straggling lease's unreported candidates on another
    // worker; the first result of each candidate counts.
    int64_t backup_of = 0;  // set on a backup lease: the straggler's lease
    int64_t backup_id = 0;  // set on a straggler's lease: its live backup
    // Re-times finalists (Job::retimes), which already have their results:
    // never backed up (one device times them all), but taken over when it
    // straggles; its end puts the finalists back to wait.
    bool retime = false;
    // Out when this coordinator started: how long it has run is unknown, so
    // it stays out of the job's lease times.
    bool recovered = false;
  };

  explicit Coordinator(const CoordinatorOptions& options);
  Status Load();
  void ReaperLoop();

  // All *Locked members run with mu_ held.
  bool Matches(const v1::KernelSpec& spec, const v1::DeviceInfo& device) const;
  // Job.waiting_for: of a queued job, the device it needs and why none binds
  // it, by BindQueuedJobsLocked's rules; of a stranded running job, that no
  // live device of its class is left.
  std::string WaitingForLocked(const Job& job) const;
  // Marks each running job stranded, or no longer, as the last live device
  // that serves it goes silent or one comes: its watchers are told.
  void StrandedChangedLocked();
  // What queued jobs wait for depends on the fleet: their watchers are told
  // when it changes.
  void FleetChangedLocked();
  // Whether the job was submitted to be compiled on its workers.
  static bool FingerprintedForWorkers(const db::JobRow& row);
  // Binds each queued job to a live device it matches. A job its workers
  // compile takes on the binding worker's compiler, so only `asking_worker`
  // (registering or asking for a lease: alive now) binds it, never a worker
  // that may have died since its last heartbeat.
  void BindQueuedJobsLocked(const std::string& asking_worker = "");
  Status BindJobLocked(Job& job, const v1::DeviceInfo& device);
  // The kernel's best of each problem of the job, where it has none: the
  // fastest best of the other kernels of its source on the job's device class.
  Status InheritBestLocked(Job& job);
  // A bound job's warm start (docs/search.md, "Warm starts from other
  // devices"): per problem, the kernel's best configuration on the job's
  // device class for the nearest tuned problem, then the search::kWarmStartConfigs
  // configurations ranked best over the kernel's results on every other
  // (problem, device class) it was tuned on (search/transfer.h).
  Status SeedWarmStartLocked(Job& job);
  void FailJobLocked(Job& job, const std::string& error);
  // Ends the job once its search is done, every candidate has its result and
  // its finalists were timed again.
  void FinishIfDoneLocked(Job& job);
  // Job::retimes from the job's results; none when Search.finalists < 2.
  void ChooseFinalistsLocked(Job& job);
  // Asks the job's search for more candidates as results come back, then
  // FinishIfDoneLocked.
  void AdvanceSearchLocked(Job& job);
  void TellSearchLocked(Job& job, const Candidate& candidate, const db::ResultRow& row);
  Status AddCandidatesLocked(Job& job, const std::vector<NewCandidate>& news);
  // A device serves a bound job of its class; one the workers compile only
  // where its worker builds with the compiler the job is measured with.
  static bool ServesJob(const v1::DeviceInfo& device, const Job& job);
  // The live devices that serve the job.
  size_t LiveDevicesLocked(const Job& job) const;
  void MarkReadyLocked(Job& job, Candidate& candidate);
  // Takes a successful build for the candidate; a PRUNED result when the
  // build exceeds the bound device's limits.
  std::optional<db::ResultRow> UseBuildLocked(const Job& job, Candidate& candidate,
                                              const db::BuildRow& build) const;
  // Chooses where the job compiles (target.compile_on) and for what.
  Status SetTargetLocked(Job& job, const v1::DeviceInfo& device);
  // Queues builds here, or packs BuildBundles for the workers.
  void ScheduleBuildsLocked(Job& job, const std::vector<v1::Config>& configs);
  // Stores the configs as BuildBundles of build_batch_size configurations
  // and makes their candidates ready with the bundle as their artifact.
  Status PackBundlesLocked(Job& job, const std::vector<v1::Config>& configs);
  // The job's earlier builds on this coordinator, by config key.
  Result<std::map<std::string, db::BuildRow>> LoadBuildsLocked(const Job& job);
  void OnBatchBuilt(int64_t job_id, const std::vector<compiler::ConfigBuild>& builds);
  Status RecordBuildsLocked(int64_t job_id, const std::vector<compiler::ConfigBuild>& builds);
  Job* PickJobLocked(const v1::DeviceInfo& device);
  Result<v1::Lease> GrantLeaseLocked(Job& job, const std::string& worker_id, int device_index,
                                     int max_candidates);
  // The finalists of a problem of `job` that wait for a device.
  Result<v1::Lease> GrantRetimeLeaseLocked(Job& job, const std::string& worker_id,
                                           int device_index);
  // Results of a retime lease; once all came, or the lease finished, the
  // re-timings and the winner, as the best, are stored with the lease's end.
  Result<v1::ReportResultsResponse> ReportRetimeLocked(const v1::ReportResultsRequest& request,
                                                       Lease& lease);
  // A lease of another worker on this device class, outstanding for three
  // times as long as this job's leases normally take (a re-timing: as its
  // finalists' re-timing normally takes, doubled for each takeover), with
  // work left and no backup yet.
  Lease* PickStragglerLocked(const v1::DeviceInfo& device, const std::string& worker_id);
  Result<v1::Lease> GrantBackupLeaseLocked(Lease& straggler, const std::string& worker_id,
                                           int device_index);
  // A straggling retime lease ends, and its finalists go whole to the asking
  // device: their re-timings must come from one device.
  Result<v1::Lease> TakeOverRetimeLocked(Lease& straggler, const std::string& worker_id,
                                         int device_index);
  // The retime waiting for `lease`'s results, or null.
  Job::Retime* RetimeOfLocked(const Lease& lease);
  v1::Lease LeaseProtoLocked(const Job& job, const Lease& lease);
  // The lease's candidates that still wait for its worker's results.
  std::vector<Candidate*> UnreportedLocked(const Lease& lease);
  bool AllReportedLocked(const Lease& lease) const;
  // Ending a lease hands its unreported candidates to its live backup, or
  // else back to the front of the ready queue. Planned, stored (in the
  // caller's transaction), then applied to memory once committed.
  struct Release {
    int64_t lease_id = 0;
    std::vector<Candidate*> unreported;  // but for those being reported now
    int64_t heir = 0;                    // the backup lease that takes them
  };
  Release PlanReleaseLocked(const Lease& lease, const std::set<int64_t>& reporting);
  Status StoreReleaseLocked(const Release& release);
  void ApplyReleaseLocked(const Release& release);
  Status ReleaseLeaseLocked(int64_t lease_id);
  db::ResultRow MakeResultRow(const Job& job, const Candidate& candidate,
                              const v1::CandidateResult& result, const std::string& worker) const;
  void ApplyResultLocked(Job& job, Candidate& candidate, const db::ResultRow& row,
                         bool became_best);
  v1::Job ToProto(const Job& job);
  v1::Job ToProto(const db::JobRow& row);
  void ChangedLocked(Job& job);
  int64_t LeasesOfLocked(const std::string& worker_id) const;
  // kPermissionDenied when an own_only caller names a job of another token;
  // OK for one that does not exist (the caller reports that).
  Status CheckJobOwner(const db::JobRow& row, const auth::Caller& caller) const;

  CoordinatorOptions options_;
  Observer* const observer_;  // options_.observer, or one observing nothing
  std::unique_ptr<compiler::ArtifactStore> store_;
  BestIndex best_;
  std::unique_ptr<BuildQueue> builds_;
  size_t build_runs_ = 1;  // compiler runs the build queue keeps going at once

  std::mutex mu_;
  std::condition_variable work_cv_;    // new ready candidates
  std::condition_variable change_cv_;  // any job changed
  std::unique_ptr<db::TuningDb> db_;
  auth::TokenIndex tokens_;       // its own lock: read on every call
  int64_t admin_file_token_ = 0;  // EnsureAdminToken's
  std::map<int64_t, Job> jobs_;   // unfinished, and ended since the start
  KernelOwners kernel_owners_;
  std::unordered_map<int64_t, Candidate> candidates_;
  std::map<int64_t, Lease> leases_;
  std::unique_ptr<WorkerRegistry> workers_;  // made by Load, once db_ is open
  uint64_t lease_seq_ = 0;
  // Builds whose records could not be written yet, by job.
  std::vector<std::pair<int64_t, std::vector<compiler::ConfigBuild>>> unrecorded_builds_;

  std::atomic<bool> stopping_{false};
  std::thread reaper_;
};

}  // namespace tf::coordinator
