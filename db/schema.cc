#include "db/schema.h"

#include <string>
#include <vector>

namespace tf::db {
namespace {

// Never edit a migration that has shipped; append a new one.
const std::vector<const char*>& Migrations() {
  static const std::vector<const char*> kMigrations = {
      // 1: jobs, candidates, builds, results, best configs, workers, leases.
      R"sql(
CREATE TABLE kernels(
  fingerprint TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  created_ms INTEGER NOT NULL);
CREATE TABLE jobs(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  kernel TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  spec BLOB NOT NULL,
  sources BLOB NOT NULL,
  state INTEGER NOT NULL,
  priority INTEGER NOT NULL DEFAULT 0,
  device_class TEXT NOT NULL DEFAULT '',
  error TEXT NOT NULL DEFAULT '',
  candidates_total INTEGER NOT NULL DEFAULT 0,
  candidates_done INTEGER NOT NULL DEFAULT 0,
  candidates_failed INTEGER NOT NULL DEFAULT 0,
  candidates_cached INTEGER NOT NULL DEFAULT 0,
  created_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL);
CREATE INDEX jobs_by_state ON jobs(state);
CREATE TABLE builds(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  fingerprint TEXT NOT NULL,
  target TEXT NOT NULL,
  config_key TEXT NOT NULL,
  ok INTEGER NOT NULL,
  artifact_sha256 TEXT NOT NULL DEFAULT '',
  symbol TEXT NOT NULL DEFAULT '',
  diagnostics TEXT NOT NULL DEFAULT '',
  UNIQUE(fingerprint, target, config_key));
CREATE TABLE candidates(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  job_id INTEGER NOT NULL REFERENCES jobs(id),
  config_key TEXT NOT NULL,
  problem_text TEXT NOT NULL,
  state INTEGER NOT NULL,
  lease_id INTEGER NOT NULL DEFAULT 0,
  UNIQUE(job_id, config_key, problem_text));
CREATE INDEX candidates_by_job ON candidates(job_id, state);
CREATE TABLE results(
  candidate_id INTEGER PRIMARY KEY REFERENCES candidates(id),
  job_id INTEGER NOT NULL,
  fingerprint TEXT NOT NULL,
  config_key TEXT NOT NULL,
  problem_key TEXT NOT NULL,
  device_class TEXT NOT NULL,
  status INTEGER NOT NULL,
  error TEXT NOT NULL DEFAULT '',
  median_ns REAL, p10_ns REAL, p90_ns REAL, min_ns REAL, mean_ns REAL,
  repeats INTEGER, gflops REAL, max_abs_error REAL,
  worker TEXT NOT NULL DEFAULT '',
  cached INTEGER NOT NULL DEFAULT 0,
  created_ms INTEGER NOT NULL);
CREATE INDEX results_by_job ON results(job_id);
CREATE INDEX results_by_kernel ON results(fingerprint, device_class);
CREATE TABLE best(
  kernel TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  problem_key TEXT NOT NULL,
  device_class TEXT NOT NULL,
  candidate_id INTEGER NOT NULL REFERENCES results(candidate_id),
  median_ns REAL NOT NULL,
  updated_ms INTEGER NOT NULL,
  PRIMARY KEY(fingerprint, problem_key, device_class));
CREATE TABLE workers(
  id TEXT PRIMARY KEY,
  hostname TEXT NOT NULL,
  devices BLOB NOT NULL,
  registered_ms INTEGER NOT NULL);
CREATE TABLE leases(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  job_id INTEGER NOT NULL,
  worker_id TEXT NOT NULL,
  device_index INTEGER NOT NULL,
  artifact_sha256 TEXT NOT NULL,
  active INTEGER NOT NULL);
)sql",
      // 2: device clocks and temperature recorded with each result, so that
      // timings taken at different clocks can be told apart.
      R"sql(
ALTER TABLE results ADD COLUMN sm_clock_mhz REAL;
ALTER TABLE results ADD COLUMN temperature_c REAL;
CREATE INDEX leases_active ON leases(active);
)sql",
      // 3: GPU builds: the reference kernel's symbol and each build's
      // resource use (registers, shared memory, spills), kept with results.
      R"sql(
ALTER TABLE builds ADD COLUMN reference_symbol TEXT NOT NULL DEFAULT '';
ALTER TABLE builds ADD COLUMN resources BLOB NOT NULL DEFAULT '';
ALTER TABLE results ADD COLUMN resources BLOB NOT NULL DEFAULT '';
)sql",
      // 4: bearer tokens, kept as SHA-256 hashes only, each with a role; jobs
      // and workers record the token that made them (0: none, as before).
      R"sql(
CREATE TABLE tokens(
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  role TEXT NOT NULL,
  hash TEXT NOT NULL UNIQUE,
  created_ms INTEGER NOT NULL,
  revoked_ms INTEGER NOT NULL DEFAULT 0);
ALTER TABLE jobs ADD COLUMN owner_token INTEGER NOT NULL DEFAULT 0;
CREATE INDEX jobs_by_owner ON jobs(owner_token);
ALTER TABLE workers ADD COLUMN owner_token INTEGER NOT NULL DEFAULT 0;
)sql",
      // 5: searched jobs: when a job started on a device (the origin of
      // search.max_seconds) and why its search stopped proposing.
      R"sql(
ALTER TABLE jobs ADD COLUMN started_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN stop_reason TEXT NOT NULL DEFAULT '';
)sql",
      // 6: finalists timed again in alternation at a job's end: each one's
      // re-timing (a serialized TimingStats) and the one that won it.
      R"sql(
ALTER TABLE results ADD COLUMN retiming BLOB NOT NULL DEFAULT '';
ALTER TABLE results ADD COLUMN retime_winner INTEGER NOT NULL DEFAULT 0;
)sql",
      // 7: the best configurations are kept per kernel name too: two kernels
      // of one source (one fingerprint) each keep their own. Before, the second
      // replaced the first's rows and kept its name; rows lost so come back
      // with the kernel's next job.
      R"sql(
CREATE TABLE best_by_kernel(
  kernel TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  problem_key TEXT NOT NULL,
  device_class TEXT NOT NULL,
  candidate_id INTEGER NOT NULL REFERENCES results(candidate_id),
  median_ns REAL NOT NULL,
  updated_ms INTEGER NOT NULL,
  PRIMARY KEY(kernel, fingerprint, problem_key, device_class));
INSERT INTO best_by_kernel SELECT kernel, fingerprint, problem_key, device_class, candidate_id,
  median_ns, updated_ms FROM best;
DROP TABLE best;
ALTER TABLE best_by_kernel RENAME TO best;
)sql",
      // 8: the compiler a job compiled on its workers is measured with (the
      // bound device's worker's); empty: the coordinator's, or not known.
      R"sql(
ALTER TABLE jobs ADD COLUMN toolchain TEXT NOT NULL DEFAULT '';
)sql",
      // 9: a job's distinct configurations and how many are built, so that an
      // ended job says so after a restart too (they were kept in memory only).
      R"sql(
ALTER TABLE jobs ADD COLUMN configurations INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN builds_done INTEGER NOT NULL DEFAULT 0;
)sql",
      // 10: a worker silent for the retention period is forgotten: when it
      // went silent (0: heard from since it registered) is kept, so that a
      // restart does not set its clock back; and each worker's results are
      // counted at start without a scan of them all.
      R"sql(
ALTER TABLE workers ADD COLUMN silent_since_ms INTEGER NOT NULL DEFAULT 0;
CREATE INDEX results_by_worker ON results(worker, cached);
)sql",
      // 11: a forgotten worker's row stays, marked forgotten, so that its id
      // keeps the token that owns it: deleted, any token could take the id
      // over and report for the candidates once leased to it. The ids of
      // workers forgotten before lost their owner with their row: each that
      // held a lease is kept forgotten and owned by no token (0), so that no
      // worker token can take it (its worker registers under a new id).
      R"sql(
ALTER TABLE workers ADD COLUMN forgotten INTEGER NOT NULL DEFAULT 0;
INSERT INTO workers(id, hostname, devices, registered_ms, owner_token, forgotten)
  SELECT worker_id, '', CAST('' AS BLOB), 0, 0, 1 FROM leases
  WHERE worker_id NOT IN (SELECT id FROM workers) GROUP BY worker_id;
)sql",
      // 12: kernel names an admin handed to a team, or to no one
      // (SetKernelOwner), over what their jobs say: `team` empty is no one, and
      // the jobs up to `since_job` no longer claim the name.
      R"sql(
CREATE TABLE kernel_owners(
  kernel TEXT PRIMARY KEY,
  team TEXT NOT NULL,
  since_job INTEGER NOT NULL);
)sql",
  };
  return kMigrations;
}

}  // namespace

int LatestSchemaVersion() { return static_cast<int>(Migrations().size()); }

Result<int> SchemaVersion(Database& db) {
  TF_RETURN_IF_ERROR(
      db.Exec(db.SchemaSql("CREATE TABLE IF NOT EXISTS schema_version(version INTEGER NOT NULL)")));
  TF_ASSIGN_OR_RETURN(auto stmt, db.Prepare("SELECT MAX(version) FROM schema_version"));
  TF_ASSIGN_OR_RETURN(bool row, stmt.Step());
  return row && !stmt.IsNull(0) ? static_cast<int>(stmt.Int(0)) : 0;
}

Status Migrate(Database& db, int target) {
  TF_ASSIGN_OR_RETURN(int version, SchemaVersion(db));
  if (version > LatestSchemaVersion()) {
    return Status::FailedPrecondition(
        db.name() + " has tuning-database schema version " + std::to_string(version) +
        ", newer than this build understands (" + std::to_string(LatestSchemaVersion()) +
        "); use a newer tunefleet");
  }
  for (int next = version + 1; next <= target; ++next) {
    Transaction txn(db);
    TF_RETURN_IF_ERROR(txn.begin_status());
    Status applied = db.Exec(db.SchemaSql(Migrations()[next - 1]));
    if (!applied.ok()) {
      return Status::Internal("migration to schema version " + std::to_string(next) +
                              " failed: " + applied.message());
    }
    TF_RETURN_IF_ERROR(
        db.Exec("INSERT INTO schema_version(version) VALUES(" + std::to_string(next) + ")"));
    TF_RETURN_IF_ERROR(txn.Commit());
  }
  return Status::Ok();
}

}  // namespace tf::db
