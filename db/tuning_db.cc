#include "db/tuning_db.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <tuple>

#include "common/files.h"
#include "db/schema.h"

namespace tf::db {
namespace {

std::string SerializeSources(const std::vector<v1::SourceFile>& sources) {
  v1::SubmitJobRequest holder;
  for (const auto& s : sources) *holder.add_sources() = s;
  return holder.SerializeAsString();
}

std::vector<v1::SourceFile> ParseSources(const std::string& bytes) {
  v1::SubmitJobRequest holder;
  holder.ParseFromString(bytes);
  return {holder.sources().begin(), holder.sources().end()};
}

constexpr const char* kJobColumns =
    "id, kernel, fingerprint, spec, sources, state, priority, device_class, error, "
    "candidates_total, candidates_done, candidates_failed, candidates_cached, created_ms, "
    "updated_ms, owner_token, started_ms, stop_reason, toolchain, configurations, builds_done";

JobRow ReadJob(const Statement& s) {
  JobRow job;
  job.id = s.Int(0);
  job.kernel = s.Text(1);
  job.fingerprint = s.Text(2);
  job.spec.ParseFromString(s.Text(3));
  job.sources = ParseSources(s.Text(4));
  job.state = static_cast<v1::JobState>(s.Int(5));
  job.priority = static_cast<int>(s.Int(6));
  job.device_class = s.Text(7);
  job.error = s.Text(8);
  job.candidates_total = s.Int(9);
  job.candidates_done = s.Int(10);
  job.candidates_failed = s.Int(11);
  job.candidates_cached = s.Int(12);
  job.created_ms = s.Int(13);
  job.updated_ms = s.Int(14);
  job.owner_token = s.Int(15);
  job.started_ms = s.Int(16);
  job.stop_reason = s.Text(17);
  job.toolchain = s.Text(18);
  job.configurations = s.Int(19);
  job.builds_done = s.Int(20);
  return job;
}

constexpr const char* kResultColumns =
    "r.candidate_id, r.job_id, r.fingerprint, r.config_key, r.problem_key, r.device_class, "
    "r.worker, r.cached, r.status, r.error, r.median_ns, r.p10_ns, r.p90_ns, r.min_ns, "
    "r.mean_ns, r.repeats, r.gflops, r.max_abs_error, r.sm_clock_mhz, r.temperature_c, "
    "r.resources, r.created_ms, r.retiming, r.retime_winner";
constexpr int kResultColumnCount = 24;

ResultRow ReadResult(const Statement& s) {
  ResultRow r;
  r.candidate_id = s.Int(0);
  r.job_id = s.Int(1);
  r.fingerprint = s.Text(2);
  r.config_key = s.Text(3);
  r.problem_key = s.Text(4);
  r.device_class = s.Text(5);
  r.worker = s.Text(6);
  r.cached = s.Int(7) != 0;
  r.status = static_cast<v1::ResultStatus>(s.Int(8));
  r.error = s.Text(9);
  r.timing.set_median_ns(s.Double(10));
  r.timing.set_p10_ns(s.Double(11));
  r.timing.set_p90_ns(s.Double(12));
  r.timing.set_min_ns(s.Double(13));
  r.timing.set_mean_ns(s.Double(14));
  r.timing.set_repeats(static_cast<int32_t>(s.Int(15)));
  r.timing.set_gflops(s.Double(16));
  r.max_abs_error = s.Double(17);
  r.timing.set_core_clock_mhz(s.Double(18));
  r.timing.set_temperature_c(s.Double(19));
  r.resources.ParseFromString(s.Text(20));
  r.created_ms = s.Int(21);
  r.retiming.ParseFromString(s.Text(22));
  r.retime_winner = s.Int(23) != 0;
  return r;
}

// ReadResult, then the candidate's problem text selected after the result's columns.
ResultRow ReadResultWithProblemText(const Statement& s) {
  ResultRow r = ReadResult(s);
  r.problem_text = s.Text(kResultColumnCount);
  return r;
}

// The id an INSERT ... RETURNING id gave its row.
Result<int64_t> InsertedId(Statement& insert) {
  TF_ASSIGN_OR_RETURN(bool row, insert.Step());
  int64_t id = row ? insert.Int(0) : 0;
  insert.Reset();
  if (!row) return Status::Internal("tuning database: an insert returned no id");
  return id;
}

template <typename Row, typename Reader>
Result<std::vector<Row>> Collect(Statement& stmt, Reader read) {
  std::vector<Row> rows;
  while (true) {
    TF_ASSIGN_OR_RETURN(bool has_row, stmt.Step());
    if (!has_row) break;
    rows.push_back(read(stmt));
  }
  return rows;
}

}  // namespace

Result<std::unique_ptr<TuningDb>> TuningDb::Open(const std::string& location, bool synchronous_full,
                                                 const std::function<Status()>& standing_by) {
  TF_ASSIGN_OR_RETURN(auto database, Database::Open(location, synchronous_full));
  TF_RETURN_IF_ERROR(database->HoldAsOnlyWriter([&] {
    spdlog::warn(
        "tuning database {} has another coordinator: standing by until its connection ends",
        database->name());
    return standing_by ? standing_by() : Status::Ok();
  }));
  TF_RETURN_IF_ERROR(Migrate(*database, LatestSchemaVersion()));
  return std::unique_ptr<TuningDb>(new TuningDb(std::move(database)));
}

Result<int64_t> TuningDb::EnsureKernel(const std::string& fingerprint, const std::string& name,
                                       int64_t now_ms) {
  TF_ASSIGN_OR_RETURN(auto insert,
                      db_->Prepare("INSERT INTO kernels(fingerprint, name, "
                                   "created_ms) VALUES(?, ?, ?) ON CONFLICT DO NOTHING"));
  TF_RETURN_IF_ERROR(insert.Bind(1, fingerprint).Bind(2, name).Bind(3, now_ms).Run());
  TF_ASSIGN_OR_RETURN(auto select,
                      db_->Prepare("SELECT created_ms FROM kernels WHERE fingerprint = ?"));
  select.Bind(1, fingerprint);
  TF_ASSIGN_OR_RETURN(bool row, select.Step());
  return row ? select.Int(0) : now_ms;
}

Status TuningDb::InsertJob(JobRow& job) {
  TF_ASSIGN_OR_RETURN(auto stmt,
                      db_->Prepare("INSERT INTO jobs(kernel, fingerprint, spec, sources, state, "
                                   "priority, device_class, error, candidates_total, created_ms, "
                                   "updated_ms, owner_token) VALUES(?,?,?,?,?,?,?,?,?,?,?,?) "
                                   "RETURNING id"));
  stmt.Bind(1, job.kernel)
      .Bind(2, job.fingerprint)
      .BindBlob(3, job.spec.SerializeAsString())
      .BindBlob(4, SerializeSources(job.sources))
      .Bind(5, static_cast<int64_t>(job.state))
      .Bind(6, static_cast<int64_t>(job.priority))
      .Bind(7, job.device_class)
      .Bind(8, job.error)
      .Bind(9, job.candidates_total)
      .Bind(10, job.created_ms)
      .Bind(11, job.updated_ms)
      .Bind(12, job.owner_token);
  TF_ASSIGN_OR_RETURN(job.id, InsertedId(stmt));
  return Status::Ok();
}

Status TuningDb::UpdateJob(const JobRow& job) {
  TF_ASSIGN_OR_RETURN(auto stmt,
                      db_->Prepare("UPDATE jobs SET state=?, device_class=?, error=?, "
                                   "candidates_total=?, candidates_done=?, candidates_failed=?, "
                                   "candidates_cached=?, updated_ms=?, started_ms=?, "
                                   "stop_reason=?, fingerprint=?, toolchain=?, configurations=?, "
                                   "builds_done=? WHERE id=?"));
  stmt.Bind(1, static_cast<int64_t>(job.state))
      .Bind(2, job.device_class)
      .Bind(3, job.error)
      .Bind(4, job.candidates_total)
      .Bind(5, job.candidates_done)
      .Bind(6, job.candidates_failed)
      .Bind(7, job.candidates_cached)
      .Bind(8, job.updated_ms)
      .Bind(9, job.started_ms)
      .Bind(10, job.stop_reason)
      .Bind(11, job.fingerprint)
      .Bind(12, job.toolchain)
      .Bind(13, job.configurations)
      .Bind(14, job.builds_done)
      .Bind(15, job.id);
  return stmt.Run();
}

Result<std::optional<JobRow>> TuningDb::GetJob(int64_t id) {
  TF_ASSIGN_OR_RETURN(
      auto stmt, db_->Prepare(std::string("SELECT ") + kJobColumns + " FROM jobs WHERE id = ?"));
  stmt.Bind(1, id);
  TF_ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return std::optional<JobRow>();
  return std::optional<JobRow>(ReadJob(stmt));
}

Result<std::vector<JobRow>> TuningDb::LoadJobs(bool unfinished_only, int limit,
                                               std::optional<int64_t> owner) {
  std::string sql = std::string("SELECT ") + kJobColumns + " FROM jobs WHERE TRUE";
  if (unfinished_only) {
    sql += " AND state IN (" + std::to_string(v1::JOB_STATE_QUEUED) + "," +
           std::to_string(v1::JOB_STATE_RUNNING) + ")";
  }
  if (owner) sql += " AND owner_token = " + std::to_string(*owner);
  sql += " ORDER BY id DESC LIMIT ?";
  TF_ASSIGN_OR_RETURN(auto stmt, db_->Prepare(sql));
  stmt.Bind(1, static_cast<int64_t>(limit));
  return Collect<JobRow>(stmt, ReadJob);
}

namespace {

// Rows and ids go in groups: on PostgreSQL every statement is a round trip,
// and a job binds tens of thousands of candidates under the coordinator's lock.
constexpr int kRowsPerInsert = 256;
constexpr int kIdsPerUpdate = 32;  // a lease's candidates, at most, by default

// "(?,?,?),(?,?,?)": `rows` groups of `columns` placeholders.
std::string Placeholders(int rows, int columns) {
  std::string group = "(?";
  for (int c = 1; c < columns; ++c) group += ",?";
  group += ")";
  std::string out = group;
  for (int r = 1; r < rows; ++r) out += "," + group;
  return out;
}

}  // namespace

Status TuningDb::InsertCandidates(std::vector<CandidateRow>& candidates) {
  size_t done = 0;
  while (done < candidates.size()) {
    const int rows = candidates.size() - done >= kRowsPerInsert ? kRowsPerInsert : 1;
    TF_ASSIGN_OR_RETURN(
        auto stmt,
        db_->Prepare("INSERT INTO candidates(job_id, config_key, problem_text, state, "
                     "lease_id) VALUES" +
                     Placeholders(rows, 5) + " RETURNING id, job_id, config_key, problem_text"));
    // RETURNING promises no order: the ids are matched to their rows.
    std::map<std::tuple<int64_t, std::string, std::string>, CandidateRow*> by_key;
    for (int r = 0; r < rows; ++r) {
      CandidateRow& c = candidates[done + r];
      stmt.Bind(5 * r + 1, c.job_id)
          .Bind(5 * r + 2, c.config_key)
          .Bind(5 * r + 3, c.problem_text)
          .Bind(5 * r + 4, static_cast<int64_t>(c.state))
          .Bind(5 * r + 5, c.lease_id);
      by_key[{c.job_id, c.config_key, c.problem_text}] = &c;
    }
    for (int r = 0; r < rows; ++r) {
      TF_ASSIGN_OR_RETURN(bool row, stmt.Step());
      auto it = row ? by_key.find({stmt.Int(1), stmt.Text(2), stmt.Text(3)}) : by_key.end();
      if (it == by_key.end()) return Status::Internal("tuning database: an insert lost a row");
      it->second->id = stmt.Int(0);
    }
    stmt.Reset();
    done += rows;
  }
  return Status::Ok();
}

Status TuningDb::SetCandidateState(const std::vector<int64_t>& ids, CandidateState state,
                                   int64_t lease_id) {
  TF_ASSIGN_OR_RETURN(auto stmt, db_->Prepare("UPDATE candidates SET state=?, lease_id=? WHERE "
                                              "id IN " +
                                              Placeholders(1, kIdsPerUpdate)));
  for (size_t at = 0; at < ids.size(); at += kIdsPerUpdate) {
    stmt.Bind(1, static_cast<int64_t>(state)).Bind(2, lease_id);
    // A short last group repeats its last id.
    for (size_t k = 0; k < kIdsPerUpdate; ++k) {
      stmt.Bind(3 + static_cast<int>(k), ids[std::min(at + k, ids.size() - 1)]);
    }
    TF_RETURN_IF_ERROR(stmt.Run());
  }
  return Status::Ok();
}

Result<std::vector<CandidateRow>> TuningDb::LoadCandidates(int64_t job_id) {
  TF_ASSIGN_OR_RETURN(auto stmt, db_->Prepare("SELECT id, job_id, config_key, problem_text, "
                                              "state, lease_id FROM candidates WHERE job_id = ? "
                                              "ORDER BY id"));
  stmt.Bind(1, job_id);
  return Collect<CandidateRow>(stmt, [](const Statement& s) {
    CandidateRow c;
    c.id = s.Int(0);
    c.job_id = s.Int(1);
    c.config_key = s.Text(2);
    c.problem_text = s.Text(3);
    c.state = static_cast<CandidateState>(s.Int(4));
    c.lease_id = s.Int(5);
    return c;
  });
}

Result<std::map<std::string, BuildRow>> TuningDb::LoadBuilds(const std::string& fingerprint,
                                                             const std::string& target) {
  TF_ASSIGN_OR_RETURN(auto stmt,
                      db_->Prepare("SELECT config_key, ok, artifact_sha256, symbol, diagnostics, "
                                   "reference_symbol, resources FROM builds WHERE fingerprint = ? "
                                   "AND target = ?"));
  stmt.Bind(1, fingerprint).Bind(2, target);
  std::map<std::string, BuildRow> builds;
  while (true) {
    TF_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    BuildRow b{
        stmt.Text(0), stmt.Int(1) != 0, stmt.Text(2), stmt.Text(3), stmt.Text(4), stmt.Text(5), {}};
    b.resources.ParseFromString(stmt.Text(6));
    builds.emplace(b.config_key, std::move(b));
  }
  return builds;
}

Status TuningDb::PutBuild(const std::string& fingerprint, const std::string& target,
                          const BuildRow& build) {
  TF_ASSIGN_OR_RETURN(
      auto stmt,
      db_->Prepare("INSERT INTO builds(fingerprint, target, config_key, ok, artifact_sha256, "
                   "symbol, diagnostics, reference_symbol, resources) VALUES(?,?,?,?,?,?,?,?,?) "
                   "ON CONFLICT(fingerprint, target, config_key) DO UPDATE SET ok = excluded.ok, "
                   "artifact_sha256 = excluded.artifact_sha256, symbol = excluded.symbol, "
                   "diagnostics = excluded.diagnostics, reference_symbol = "
                   "excluded.reference_symbol, resources = excluded.resources"));
  stmt.Bind(1, fingerprint)
      .Bind(2, target)
      .Bind(3, build.config_key)
      .Bind(4, static_cast<int64_t>(build.ok))
      .Bind(5, build.artifact_sha256)
      .Bind(6, build.symbol)
      .Bind(7, build.diagnostics)
      .Bind(8, build.reference_symbol)
      .BindBlob(9, build.resources.SerializeAsString());
  return stmt.Run();
}

Result<bool> TuningDb::InsertResult(const ResultRow& r) {
  TF_ASSIGN_OR_RETURN(
      auto stmt,
      db_->Prepare("INSERT INTO results(candidate_id, job_id, fingerprint, config_key, "
                   "problem_key, device_class, worker, cached, status, error, median_ns, p10_ns, "
                   "p90_ns, min_ns, mean_ns, repeats, gflops, max_abs_error, sm_clock_mhz, "
                   "temperature_c, resources, created_ms) "
                   "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT DO NOTHING"));
  const auto& t = r.timing;
  stmt.Bind(1, r.candidate_id)
      .Bind(2, r.job_id)
      .Bind(3, r.fingerprint)
      .Bind(4, r.config_key)
      .Bind(5, r.problem_key)
      .Bind(6, r.device_class)
      .Bind(7, r.worker)
      .Bind(8, static_cast<int64_t>(r.cached))
      .Bind(9, static_cast<int64_t>(r.status))
      .Bind(10, r.error)
      .Bind(11, t.median_ns())
      .Bind(12, t.p10_ns())
      .Bind(13, t.p90_ns())
      .Bind(14, t.min_ns())
      .Bind(15, t.mean_ns())
      .Bind(16, static_cast<int64_t>(t.repeats()))
      .Bind(17, t.gflops())
      .Bind(18, r.max_abs_error)
      .Bind(19, t.core_clock_mhz())
      .Bind(20, t.temperature_c())
      .BindBlob(21, r.resources.SerializeAsString())
      .Bind(22, NowUnixMs());
  TF_RETURN_IF_ERROR(stmt.Run());
  return db_->Changes() > 0;
}

Result<std::vector<ResultRow>> TuningDb::ListResults(int64_t job_id, int64_t since_ms) {
  TF_ASSIGN_OR_RETURN(
      auto stmt,
      db_->Prepare(std::string("SELECT ") + kResultColumns +
                   ", c.problem_text FROM results r JOIN candidates c ON c.id = r.candidate_id "
                   "WHERE r.job_id = ? AND r.created_ms >= ? ORDER BY (r.status != " +
                   std::to_string(v1::RESULT_STATUS_OK) +
                   "), r.retime_winner DESC, r.median_ns, r.candidate_id"));
  stmt.Bind(1, job_id).Bind(2, since_ms);
  return Collect<ResultRow>(stmt, ReadResultWithProblemText);
}

Result<std::vector<ResultRow>> TuningDb::FindResults(const std::string& fingerprint,
                                                     const std::string& device_class) {
  TF_ASSIGN_OR_RETURN(
      auto stmt, db_->Prepare(std::string("SELECT ") + kResultColumns +
                              " FROM results r WHERE r.fingerprint = ? AND r.device_class = ?"));
  stmt.Bind(1, fingerprint).Bind(2, device_class);
  return Collect<ResultRow>(stmt, ReadResult);
}

Status TuningDb::SetRetiming(int64_t candidate_id, const v1::TimingStats& retiming, bool winner) {
  TF_ASSIGN_OR_RETURN(auto stmt, db_->Prepare("UPDATE results SET retiming = ?, retime_winner = ? "
                                              "WHERE candidate_id = ?"));
  stmt.BindBlob(1, retiming.SerializeAsString())
      .Bind(2, static_cast<int64_t>(winner))
      .Bind(3, candidate_id);
  return stmt.Run();
}

Status TuningDb::PutBest(const std::string& kernel, const ResultRow& result, int64_t now_ms) {
  return UpsertBest(kernel, result, now_ms, BestUpdate::kAlways).status();
}

Result<bool> TuningDb::OfferBest(const std::string& kernel, const ResultRow& result,
                                 int64_t now_ms) {
  return UpsertBest(kernel, result, now_ms, BestUpdate::kIfFaster);
}

Result<bool> TuningDb::InheritBest(const std::string& kernel, const ResultRow& result,
                                   int64_t now_ms) {
  return UpsertBest(kernel, result, now_ms, BestUpdate::kIfAbsent);
}

Result<bool> TuningDb::UpsertBest(const std::string& kernel, const ResultRow& result,
                                  int64_t now_ms, BestUpdate update) {
  std::string sql =
      "INSERT INTO best(kernel, fingerprint, problem_key, device_class, candidate_id, median_ns, "
      "updated_ms) VALUES(?,?,?,?,?,?,?) ON CONFLICT(kernel, fingerprint, problem_key, "
      "device_class) ";
  if (update == BestUpdate::kIfAbsent) {
    sql += "DO NOTHING";
  } else {
    sql +=
        "DO UPDATE SET candidate_id = excluded.candidate_id, median_ns = excluded.median_ns, "
        "updated_ms = excluded.updated_ms";
    if (update == BestUpdate::kIfFaster) sql += " WHERE excluded.median_ns < best.median_ns";
  }
  TF_ASSIGN_OR_RETURN(auto stmt, db_->Prepare(sql));
  stmt.Bind(1, kernel)
      .Bind(2, result.fingerprint)
      .Bind(3, result.problem_key)
      .Bind(4, result.device_class)
      .Bind(5, result.candidate_id)
      .Bind(6, result.timing.median_ns())
      .Bind(7, now_ms);
  TF_RETURN_IF_ERROR(stmt.Run());
  return db_->Changes() > 0;
}

Result<std::vector<BestRow>> TuningDb::LoadBest() { return QueryBest("", {}); }

Result<std::vector<BestRow>> TuningDb::LoadBest(const std::string& fingerprint,
                                                const std::string& device_class) {
  return QueryBest(" WHERE b.fingerprint = ? AND b.device_class = ?", {fingerprint, device_class});
}

Result<std::vector<BestRow>> TuningDb::QueryBest(const std::string& where,
                                                 const std::vector<std::string>& values) {
  TF_ASSIGN_OR_RETURN(
      auto stmt,
      db_->Prepare(std::string("SELECT ") + kResultColumns +
                   ", b.kernel, k.created_ms FROM best b JOIN results r ON r.candidate_id = "
                   "b.candidate_id JOIN kernels k ON k.fingerprint = b.fingerprint" +
                   where));
  for (size_t i = 0; i < values.size(); ++i) stmt.Bind(static_cast<int>(i + 1), values[i]);
  return Collect<BestRow>(stmt, [](const Statement& s) {
    BestRow b;
    b.result = ReadResult(s);
    b.kernel = s.Text(kResultColumnCount);
    b.fingerprint_created_ms = s.Int(kResultColumnCount + 1);
    b.fingerprint = b.result.fingerprint;
    b.problem_key = b.result.problem_key;
    b.device_class = b.result.device_class;
    return b;
  });
}

Result<std::vector<CompletedTuning>> TuningDb::LoadCompletedTunings() {
  TF_ASSIGN_OR_RETURN(
      auto stmt, db_->Prepare("SELECT j.kernel, j.fingerprint, k.created_ms, j.device_class, "
                              "MAX(j.updated_ms) FROM jobs j JOIN kernels k ON k.fingerprint = "
                              "j.fingerprint WHERE j.state = " +
                              std::to_string(v1::JOB_STATE_SUCCEEDED) +
                              " GROUP BY j.kernel, j.fingerprint, k.created_ms, j.device_class"));
  return Collect<CompletedTuning>(stmt, [](const Statement& s) {
    return CompletedTuning{s.Text(0), s.Text(1), s.Int(2), s.Text(3), s.Int(4)};
  });
}

Result<std::vector<KernelSubmitter>> TuningDb::LoadKernelSubmitters() {
  TF_ASSIGN_OR_RETURN(
      auto stmt,
      db_->Prepare("SELECT j.kernel, j.owner_token, MIN(j.id) FROM jobs j LEFT JOIN kernel_owners "
                   "o ON o.kernel = j.kernel WHERE j.owner_token <> 0 AND j.id > "
                   "COALESCE(o.since_job, 0) GROUP BY j.kernel, j.owner_token ORDER BY MIN(j.id)"));
  return Collect<KernelSubmitter>(stmt, [](const Statement& s) {
    return KernelSubmitter{s.Text(0), s.Int(1), s.Int(2)};
  });
}

Result<int64_t> TuningDb::LastJobOf(const std::string& kernel) {
  TF_ASSIGN_OR_RETURN(auto stmt, db_->Prepare("SELECT MAX(id) FROM jobs WHERE kernel = ?"));
  stmt.Bind(1, kernel);
  TF_ASSIGN_OR_RETURN(bool row, stmt.Step());
  return row && !stmt.IsNull(0) ? stmt.Int(0) : 0;
}

Status TuningDb::PutKernelOwner(const KernelOwnerRow& owner) {
  TF_ASSIGN_OR_RETURN(auto stmt,
                      db_->Prepare("INSERT INTO kernel_owners(kernel, team, since_job) "
                                   "VALUES(?,?,?) ON CONFLICT(kernel) DO UPDATE SET team = "
                                   "excluded.team, since_job = excluded.since_job"));
  stmt.Bind(1, owner.kernel).Bind(2, owner.team).Bind(3, owner.since_job);
  return stmt.Run();
}

Result<std::vector<KernelOwnerRow>> TuningDb::LoadKernelOwners() {
  TF_ASSIGN_OR_RETURN(auto stmt, db_->Prepare("SELECT kernel, team, since_job FROM kernel_owners"));
  return Collect<KernelOwnerRow>(stmt, [](const Statement& s) {
    return KernelOwnerRow{s.Text(0), s.Text(1), s.Int(2)};
  });
}

Result<std::vector<ResultRow>> TuningDb::JobBest(int64_t job_id) {
  // The first of each problem, the re-timing's winner or else by time (then
  // by candidate), in the order of the problems' first candidates.
  TF_ASSIGN_OR_RETURN(
      auto stmt,
      db_->Prepare(std::string("SELECT ") + kResultColumns +
                   ", r.problem_text FROM (SELECT results.*, c.problem_text, MIN(c.id) OVER "
                   "(PARTITION BY results.problem_key) AS problem_order, ROW_NUMBER() OVER "
                   "(PARTITION BY results.problem_key ORDER BY results.retime_winner DESC, "
                   "results.median_ns, results.candidate_id) AS place FROM results JOIN candidates "
                   "c ON c.id = "
                   "results.candidate_id WHERE results.job_id = ? AND results.status = " +
                   std::to_string(v1::RESULT_STATUS_OK) +
                   ") r WHERE r.place = 1 ORDER BY r.problem_order"));
  stmt.Bind(1, job_id);
  return Collect<ResultRow>(stmt, ReadResultWithProblemText);
}

Status TuningDb::PutWorker(const WorkerRow& worker) {
  v1::RegisterRequest holder;
  for (const auto& d : worker.devices) *holder.add_devices() = d;
  TF_ASSIGN_OR_RETURN(auto stmt,
                      db_->Prepare("INSERT INTO workers(id, hostname, devices, registered_ms, "
                                   "owner_token, silent_since_ms, forgotten) VALUES(?,?,?,?,?,?,?) "
                                   "ON CONFLICT(id) DO UPDATE SET hostname = excluded.hostname, "
                                   "devices = excluded.devices, registered_ms = "
                                   "excluded.registered_ms, owner_token = excluded.owner_token, "
                                   "silent_since_ms = excluded.silent_since_ms, forgotten = "
                                   "excluded.forgotten"));
  stmt.Bind(1, worker.id)
      .Bind(2, worker.hostname)
      .BindBlob(3, holder.SerializeAsString())
      .Bind(4, worker.registered_ms)
      .Bind(5, worker.owner_token)
      .Bind(6, worker.silent_since_ms)
      .Bind(7, static_cast<int64_t>(worker.forgotten));
  return stmt.Run();
}

Result<std::vector<WorkerRow>> TuningDb::LoadWorkers() {
  TF_ASSIGN_OR_RETURN(auto stmt,
                      db_->Prepare("SELECT id, hostname, devices, registered_ms, owner_token, "
                                   "silent_since_ms, forgotten FROM workers"));
  return Collect<WorkerRow>(stmt, [](const Statement& s) {
    WorkerRow w;
    w.id = s.Text(0);
    w.hostname = s.Text(1);
    v1::RegisterRequest holder;
    holder.ParseFromString(s.Text(2));
    w.devices.assign(holder.devices().begin(), holder.devices().end());
    w.registered_ms = s.Int(3);
    w.owner_token = s.Int(4);
    w.silent_since_ms = s.Int(5);
    w.forgotten = s.Int(6) != 0;
    return w;
  });
}

Result<int64_t> TuningDb::CountWorkerResults(const std::string& worker_id) {
  TF_ASSIGN_OR_RETURN(auto stmt,
                      db_->Prepare("SELECT COUNT(*) FROM results WHERE worker = ? AND cached = 0"));
  stmt.Bind(1, worker_id);
  TF_ASSIGN_OR_RETURN(bool row, stmt.Step());
  int64_t count = row ? stmt.Int(0) : 0;
  stmt.Reset();
  return count;
}

// Roles are stored by their enum name ("ROLE_READER"), readable with sqlite3.
Status TuningDb::InsertToken(const TokenRow& token) {
  TF_ASSIGN_OR_RETURN(auto stmt, db_->Prepare("INSERT INTO tokens(id, name, role, hash, "
                                              "created_ms, revoked_ms) VALUES(?,?,?,?,?,?)"));
  stmt.Bind(1, token.info.token_id())
      .Bind(2, token.info.name())
      .Bind(3, v1::Role_Name(token.info.role()))
      .Bind(4, token.hash)
      .Bind(5, token.info.created_unix_ms())
      .Bind(6, token.info.revoked_unix_ms());
  return stmt.Run();
}

Status TuningDb::RevokeToken(int64_t token_id, int64_t now_ms) {
  TF_ASSIGN_OR_RETURN(auto stmt, db_->Prepare("UPDATE tokens SET revoked_ms = ? WHERE id = ?"));
  stmt.Bind(1, now_ms).Bind(2, token_id);
  return stmt.Run();
}

Result<std::vector<TokenRow>> TuningDb::LoadTokens() {
  TF_ASSIGN_OR_RETURN(auto stmt, db_->Prepare("SELECT id, name, role, hash, created_ms, "
                                              "revoked_ms FROM tokens ORDER BY id"));
  return Collect<TokenRow>(stmt, [](const Statement& s) {
    TokenRow t;
    t.info.set_token_id(s.Int(0));
    t.info.set_name(s.Text(1));
    v1::Role role = v1::ROLE_UNSPECIFIED;  // what nothing may call with
    v1::Role_Parse(s.Text(2), &role);
    t.info.set_role(role);
    t.hash = s.Text(3);
    t.info.set_created_unix_ms(s.Int(4));
    t.info.set_revoked_unix_ms(s.Int(5));
    return t;
  });
}

Status TuningDb::InsertLease(LeaseRow& lease) {
  TF_ASSIGN_OR_RETURN(auto stmt, db_->Prepare("INSERT INTO leases(job_id, worker_id, device_index, "
                                              "artifact_sha256, active) VALUES(?,?,?,?,1) "
                                              "RETURNING id"));
  stmt.Bind(1, lease.job_id)
      .Bind(2, lease.worker_id)
      .Bind(3, static_cast<int64_t>(lease.device_index))
      .Bind(4, lease.artifact_sha256);
  TF_ASSIGN_OR_RETURN(lease.id, InsertedId(stmt));
  return Status::Ok();
}

Status TuningDb::EndLease(int64_t lease_id) {
  TF_ASSIGN_OR_RETURN(auto stmt, db_->Prepare("UPDATE leases SET active = 0 WHERE id = ?"));
  return stmt.Bind(1, lease_id).Run();
}

Result<std::vector<LeaseRow>> TuningDb::LoadActiveLeases() {
  TF_ASSIGN_OR_RETURN(auto stmt,
                      db_->Prepare("SELECT l.id, l.job_id, l.worker_id, l.device_index, "
                                   "l.artifact_sha256, c.id FROM leases l JOIN candidates c ON "
                                   "c.lease_id = l.id AND c.state = " +
                                   std::to_string(static_cast<int>(CandidateState::kLeased)) +
                                   " WHERE l.active = 1 ORDER BY l.id, c.id"));
  std::vector<LeaseRow> leases;
  while (true) {
    TF_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    if (leases.empty() || leases.back().id != stmt.Int(0)) {
      leases.push_back({stmt.Int(0),
                        stmt.Int(1),
                        stmt.Text(2),
                        static_cast<int>(stmt.Int(3)),
                        stmt.Text(4),
                        {}});
    }
    leases.back().candidate_ids.push_back(stmt.Int(5));
  }
  return leases;
}

}  // namespace tf::db
