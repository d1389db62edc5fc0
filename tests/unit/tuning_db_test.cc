// The tuning database: schema migrations, results recorded once, best
// configurations kept, jobs and leases stored; each on SQLite and on a real
// PostgreSQL server of the test's own.
#include "db/tuning_db.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <future>
#include <map>
#include <tuple>

#include "db/schema.h"
#include "tests/test_util.h"

namespace tf::db {
namespace {

ResultRow OkResult(int64_t candidate, const std::string& config, double median_ns) {
  ResultRow r;
  r.candidate_id = candidate;
  r.job_id = 1;
  r.fingerprint = "fp1";
  r.config_key = config;
  r.problem_key = "K=64,M=64,N=64";
  r.device_class = "cpu/test";
  r.status = v1::RESULT_STATUS_OK;
  r.timing.set_median_ns(median_ns);
  return r;
}

using testing::DbKind;
using testing::TestDatabase;

class TuningDbTest : public ::testing::TestWithParam<DbKind> {
 protected:
  void SetUp() override {
    database_ = std::make_unique<TestDatabase>(GetParam(), dir_.path());
    auto db = TuningDb::Open(database_->location());
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(*db);
    JobRow job;
    job.kernel = "gemm";
    job.fingerprint = "fp1";
    job.spec.set_name("gemm");
    job.created_ms = job.updated_ms = 1000;
    ASSERT_TRUE(db_->EnsureKernel("fp1", "gemm", 1000).ok());
    ASSERT_TRUE(db_->InsertJob(job).ok());
    job_id_ = job.id;
    for (int i = 0; i < 3; ++i) {
      candidates_.push_back(
          {0, job_id_, "X=" + std::to_string(i), "M=64,N=64,K=64", CandidateState::kReady, 0});
    }
    ASSERT_TRUE(db_->InsertCandidates(candidates_).ok());
  }

  testing::TempDir dir_;
  std::unique_ptr<TestDatabase> database_;
  std::unique_ptr<TuningDb> db_;
  int64_t job_id_ = 0;
  std::vector<CandidateRow> candidates_;
};

TEST_P(TuningDbTest, ResultIsRecordedOnceWhoeverReportsIt) {
  auto first = db_->InsertResult(OkResult(candidates_[0].id, "X=0", 500));
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(*first);
  auto second = db_->InsertResult(OkResult(candidates_[0].id, "X=0", 100));
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(*second);
  auto listed = db_->ListResults(1);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].timing.median_ns(), 500);  // the first report stands
  EXPECT_EQ((*listed)[0].problem_text, "M=64,N=64,K=64");
}

TEST_P(TuningDbTest, BestKeepsTheFastestOkResult) {
  auto slow = OkResult(candidates_[0].id, "X=0", 900);
  auto fast = OkResult(candidates_[1].id, "X=1", 300);
  auto slower = OkResult(candidates_[2].id, "X=2", 600);
  for (const auto* r : {&slow, &fast, &slower}) ASSERT_TRUE(db_->InsertResult(*r).ok());
  EXPECT_TRUE(*db_->OfferBest("gemm", slow, 1));
  EXPECT_TRUE(*db_->OfferBest("gemm", fast, 2));
  EXPECT_FALSE(*db_->OfferBest("gemm", slower, 3));
  auto best = db_->LoadBest();
  ASSERT_TRUE(best.ok());
  ASSERT_EQ(best->size(), 1u);
  EXPECT_EQ((*best)[0].result.config_key, "X=1");
  EXPECT_EQ((*best)[0].kernel, "gemm");
  EXPECT_EQ((*best)[0].fingerprint_created_ms, 1000);
  auto job_best = db_->JobBest(job_id_);
  ASSERT_TRUE(job_best.ok());
  ASSERT_EQ(job_best->size(), 1u);
  EXPECT_EQ((*job_best)[0].config_key, "X=1");
}

// Two kernels of one source share a fingerprint and its results; each keeps
// its own best.
TEST_P(TuningDbTest, EachKernelOfOneSourceKeepsItsOwnBest) {
  auto slow = OkResult(candidates_[0].id, "X=0", 900);
  auto fast = OkResult(candidates_[1].id, "X=1", 300);
  for (const auto* r : {&slow, &fast}) ASSERT_TRUE(db_->InsertResult(*r).ok());
  EXPECT_TRUE(*db_->OfferBest("gemm", slow, 1));
  EXPECT_TRUE(*db_->OfferBest("gemm_copy", fast, 2));
  // Inherited only where the kernel has no best.
  EXPECT_FALSE(*db_->InheritBest("gemm", fast, 3));
  EXPECT_TRUE(*db_->InheritBest("gemm_again", slow, 4));
  EXPECT_FALSE(*db_->InheritBest("gemm_again", fast, 5));
  auto best = db_->LoadBest();
  ASSERT_TRUE(best.ok());
  std::map<std::string, std::string> config_of;
  for (const BestRow& b : *best) config_of[b.kernel] = b.result.config_key;
  EXPECT_EQ(config_of, (std::map<std::string, std::string>{
                           {"gemm", "X=0"}, {"gemm_copy", "X=1"}, {"gemm_again", "X=0"}}));
}

// What a restarted coordinator's best index learns of which fingerprints
// may answer: those with a job that succeeded on the class, each once, with
// when the newest of those jobs ended.
TEST_P(TuningDbTest, CompletedTuningsAreTheSucceededJobsFingerprintsPerDeviceClass) {
  auto job = db_->GetJob(job_id_);
  ASSERT_TRUE(job.ok() && job->has_value());
  JobRow succeeded = **job;
  succeeded.device_class = "cpu/test";
  succeeded.state = v1::JOB_STATE_SUCCEEDED;
  succeeded.updated_ms = 7000;
  ASSERT_TRUE(db_->UpdateJob(succeeded).ok());
  JobRow again = succeeded;  // another succeeded job of the same source, ended before
  again.updated_ms = 5000;
  ASSERT_TRUE(db_->InsertJob(again).ok());
  ASSERT_TRUE(db_->EnsureKernel("fp2", "gemm", 2000).ok());
  for (v1::JobState state :
       {v1::JOB_STATE_RUNNING, v1::JOB_STATE_CANCELLED, v1::JOB_STATE_FAILED}) {
    JobRow newer = succeeded;
    newer.fingerprint = "fp2";
    newer.state = state;
    ASSERT_TRUE(db_->InsertJob(newer).ok());
  }
  auto completed = db_->LoadCompletedTunings();
  ASSERT_TRUE(completed.ok()) << completed.status().ToString();
  ASSERT_EQ(completed->size(), 1u);
  EXPECT_EQ((*completed)[0].kernel, "gemm");
  EXPECT_EQ((*completed)[0].fingerprint, "fp1");
  EXPECT_EQ((*completed)[0].fingerprint_created_ms, 1000);
  EXPECT_EQ((*completed)[0].device_class, "cpu/test");
  EXPECT_EQ((*completed)[0].completed_ms, 7000);
}

TEST_P(TuningDbTest, KernelSubmittersAreEachTokensFirstJobPerKernel) {
  auto job = db_->GetJob(job_id_);  // gemm, of no token
  ASSERT_TRUE(job.ok() && job->has_value());
  std::vector<int64_t> ids;
  for (auto [kernel, token] : {std::pair{"gemm", 7}, {"gemm", 3}, {"gemm", 7}, {"conv", 3}}) {
    JobRow row = **job;
    row.kernel = kernel;
    row.owner_token = token;
    ASSERT_TRUE(db_->InsertJob(row).ok());
    ids.push_back(row.id);
  }
  auto submitters = db_->LoadKernelSubmitters();
  ASSERT_TRUE(submitters.ok()) << submitters.status().ToString();
  std::vector<std::tuple<std::string, int64_t, int64_t>> found;
  for (const KernelSubmitter& s : *submitters)
    found.emplace_back(s.kernel, s.token_id, s.first_job_id);
  std::sort(found.begin(), found.end());
  EXPECT_EQ(found, (std::vector<std::tuple<std::string, int64_t, int64_t>>{
                       {"conv", 3, ids[3]}, {"gemm", 3, ids[1]}, {"gemm", 7, ids[0]}}));
}

TEST_P(TuningDbTest, ListResultsPutsOkFirstByTime) {
  auto failed = OkResult(candidates_[0].id, "X=0", 0);
  failed.status = v1::RESULT_STATUS_TIMEOUT;
  failed.error = "timed out";
  ASSERT_TRUE(db_->InsertResult(failed).ok());
  ASSERT_TRUE(db_->InsertResult(OkResult(candidates_[1].id, "X=1", 700)).ok());
  ASSERT_TRUE(db_->InsertResult(OkResult(candidates_[2].id, "X=2", 200)).ok());
  auto listed = db_->ListResults(job_id_);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 3u);
  EXPECT_EQ((*listed)[0].config_key, "X=2");
  EXPECT_EQ((*listed)[1].config_key, "X=1");
  EXPECT_EQ((*listed)[2].status, v1::RESULT_STATUS_TIMEOUT);
}

TEST_P(TuningDbTest, JobStateAndSpecRoundTrip) {
  auto job = db_->GetJob(job_id_);
  ASSERT_TRUE(job.ok() && job->has_value());
  JobRow row = **job;
  EXPECT_EQ(row.spec.name(), "gemm");
  row.state = v1::JOB_STATE_RUNNING;
  row.device_class = "cpu/test";
  row.candidates_total = 3;
  row.candidates_done = 2;
  // Bound, a job compiled on its workers takes on the compiler of one of them.
  row.fingerprint = "fp-compiled-with-g++-13";
  row.toolchain = "g++ 13";
  ASSERT_TRUE(db_->UpdateJob(row).ok());
  auto unfinished = db_->LoadJobs(true, 10);
  ASSERT_TRUE(unfinished.ok());
  ASSERT_EQ(unfinished->size(), 1u);
  EXPECT_EQ((*unfinished)[0].candidates_done, 2);
  EXPECT_EQ((*unfinished)[0].fingerprint, "fp-compiled-with-g++-13");
  EXPECT_EQ((*unfinished)[0].toolchain, "g++ 13");
  row.state = v1::JOB_STATE_SUCCEEDED;
  row.configurations = 3;
  row.builds_done = 3;
  ASSERT_TRUE(db_->UpdateJob(row).ok());
  EXPECT_TRUE(db_->LoadJobs(true, 10)->empty());
  EXPECT_EQ(db_->LoadJobs(false, 10)->size(), 1u);
  // An ended job says what it built after a restart too.
  auto ended = db_->GetJob(job_id_);
  ASSERT_TRUE(ended.ok() && ended->has_value());
  EXPECT_EQ((*ended)->configurations, 3);
  EXPECT_EQ((*ended)->builds_done, 3);
}

TEST_P(TuningDbTest, ActiveLeasesComeBackWithTheirCandidates) {
  LeaseRow lease{0, job_id_, "w1", 0, "sha", {}};
  ASSERT_TRUE(db_->InsertLease(lease).ok());
  ASSERT_TRUE(db_->SetCandidateState({candidates_[0].id, candidates_[2].id},
                                     CandidateState::kLeased, lease.id)
                  .ok());
  auto active = db_->LoadActiveLeases();
  ASSERT_TRUE(active.ok());
  ASSERT_EQ(active->size(), 1u);
  EXPECT_EQ((*active)[0].candidate_ids,
            (std::vector<int64_t>{candidates_[0].id, candidates_[2].id}));
  ASSERT_TRUE(db_->EndLease(lease.id).ok());
  EXPECT_TRUE(db_->LoadActiveLeases()->empty());
}

// A forgotten worker's results stay, and are still counted as its own
// should it come back; copies reused by later jobs are not its reports.
TEST_P(TuningDbTest, AWorkerIsForgottenWithItsResultsKept) {
  WorkerRow worker;
  worker.id = "w1";
  worker.hostname = "host";
  worker.registered_ms = 10;
  worker.silent_since_ms = 20;
  ASSERT_TRUE(db_->PutWorker(worker).ok());
  ResultRow reported = OkResult(candidates_[0].id, "X=0", 500);
  reported.worker = "w1";
  ResultRow reused = OkResult(candidates_[1].id, "X=1", 600);
  reused.worker = "w1";
  reused.cached = true;
  ASSERT_TRUE(db_->InsertResult(reported).ok());
  ASSERT_TRUE(db_->InsertResult(reused).ok());
  auto workers = db_->LoadWorkers();
  ASSERT_TRUE(workers.ok()) << workers.status().ToString();
  ASSERT_EQ(workers->size(), 1u);
  EXPECT_EQ((*workers)[0].silent_since_ms, 20);
  EXPECT_EQ(*db_->CountWorkerResults("w1"), 1);

  worker.forgotten = true;
  ASSERT_TRUE(db_->PutWorker(worker).ok());
  workers = db_->LoadWorkers();
  ASSERT_EQ(workers->size(), 1u);  // kept, so that its id stays its token's
  EXPECT_TRUE((*workers)[0].forgotten);
  EXPECT_EQ(db_->ListResults(job_id_)->size(), 2u);
  EXPECT_EQ(*db_->CountWorkerResults("w1"), 1);
  EXPECT_EQ(*db_->CountWorkerResults("w2"), 0);
}

TEST_P(TuningDbTest, RolledBackTransactionLeavesNothing) {
  {
    auto txn = db_->Begin();
    ASSERT_TRUE(db_->InsertResult(OkResult(candidates_[0].id, "X=0", 5)).ok());
  }  // no commit
  EXPECT_TRUE(db_->ListResults(job_id_)->empty());
}

class SchemaTest : public ::testing::TestWithParam<DbKind> {
 protected:
  testing::TempDir dir_;
  TestDatabase database_{GetParam(), dir_.path()};
  const std::string path = database_.location();
};

TEST_P(SchemaTest, UpgradesAnOlderDatabaseAndKeepsItsRows) {
  {
    auto raw = Database::Open(path, false);
    ASSERT_TRUE(raw.ok());
    ASSERT_TRUE(Migrate(**raw, 1).ok());
    EXPECT_EQ(*SchemaVersion(**raw), 1);
    ASSERT_TRUE((*raw)->Exec("INSERT INTO kernels VALUES('fp', 'gemm', 5)").ok());
  }
  auto db = TuningDb::Open(path);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  EXPECT_EQ(*SchemaVersion((*db)->database()), LatestSchemaVersion());
  auto created = (*db)->EnsureKernel("fp", "gemm", 99);
  ASSERT_TRUE(created.ok());
  EXPECT_EQ(*created, 5);  // the row from version 1 survived
  // Version 2's columns are there.
  EXPECT_TRUE((*db)->database().Exec("SELECT sm_clock_mhz, temperature_c FROM results").ok());
  // And version 3's.
  EXPECT_TRUE((*db)->database().Exec("SELECT reference_symbol, resources FROM builds").ok());
}

// Version 4: tokens, and owners of jobs and workers; what was there before
// belongs to no token (0).
TEST_P(SchemaTest, UpgradesAVersion3DatabaseToTokens) {
  {
    auto raw = Database::Open(path, false);
    ASSERT_TRUE(raw.ok());
    ASSERT_TRUE(Migrate(**raw, 3).ok());
    ASSERT_TRUE((*raw)
                    ->Exec("INSERT INTO jobs(kernel, fingerprint, spec, sources, state, "
                           "created_ms, updated_ms) VALUES('k', 'fp', '', '', 1, 1, 1)")
                    .ok());
    ASSERT_TRUE((*raw)->Exec("INSERT INTO workers VALUES('w1', 'host', '', 1)").ok());
  }
  auto db = TuningDb::Open(path);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto jobs = (*db)->LoadJobs(false, 10);
  ASSERT_TRUE(jobs.ok());
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ((*jobs)[0].owner_token, 0);
  EXPECT_EQ((*db)->LoadJobs(false, 10, 0)->size(), 1u);
  EXPECT_TRUE((*db)->LoadJobs(false, 10, 7)->empty());
  auto workers = (*db)->LoadWorkers();
  ASSERT_TRUE(workers.ok());
  ASSERT_EQ(workers->size(), 1u);
  EXPECT_EQ((*workers)[0].owner_token, 0);

  TokenRow token;
  token.info.set_token_id(3);
  token.info.set_name("ci");
  token.info.set_role(v1::ROLE_SUBMITTER);
  token.info.set_created_unix_ms(10);
  token.hash = "ab12";
  ASSERT_TRUE((*db)->InsertToken(token).ok());
  TokenRow same_hash = token;
  same_hash.info.set_token_id(4);
  EXPECT_FALSE((*db)->InsertToken(same_hash).ok());  // hashes are unique
  ASSERT_TRUE((*db)->RevokeToken(3, 20).ok());
  auto tokens = (*db)->LoadTokens();
  ASSERT_TRUE(tokens.ok());
  ASSERT_EQ(tokens->size(), 1u);
  EXPECT_EQ((*tokens)[0].info.name(), "ci");
  EXPECT_EQ((*tokens)[0].info.role(), v1::ROLE_SUBMITTER);
  EXPECT_EQ((*tokens)[0].info.revoked_unix_ms(), 20);
  EXPECT_EQ((*tokens)[0].hash, "ab12");
}

// Version 7: the best configurations are kept per kernel; version 6's rows
// stay, under the kernel they name.
TEST_P(SchemaTest, UpgradesAVersion6DatabaseKeepingItsBest) {
  {
    auto raw = Database::Open(path, false);
    ASSERT_TRUE(raw.ok());
    ASSERT_TRUE(Migrate(**raw, 6).ok());
    for (const char* sql :
         {"INSERT INTO kernels VALUES('fp1', 'gemm', 5)",
          "INSERT INTO jobs(kernel, fingerprint, spec, sources, state, created_ms, updated_ms) "
          "VALUES('gemm', 'fp1', '', '', 3, 1, 1)",
          "INSERT INTO candidates(job_id, config_key, problem_text, state) "
          "VALUES(1, 'X=0', 'M=64,N=64,K=64', 3)",
          "INSERT INTO results(candidate_id, job_id, fingerprint, config_key, problem_key, "
          "device_class, status, median_ns, created_ms) "
          "VALUES(1, 1, 'fp1', 'X=0', 'K=64,M=64,N=64', 'cpu/test', 1, 700, 1)",
          "INSERT INTO best VALUES('gemm', 'fp1', 'K=64,M=64,N=64', 'cpu/test', 1, 700, 1)"}) {
      ASSERT_TRUE((*raw)->Exec(sql).ok()) << sql;
    }
  }
  auto db = TuningDb::Open(path);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto best = (*db)->LoadBest();
  ASSERT_TRUE(best.ok()) << best.status().ToString();
  ASSERT_EQ(best->size(), 1u);
  EXPECT_EQ((*best)[0].kernel, "gemm");
  EXPECT_EQ((*best)[0].result.config_key, "X=0");
  EXPECT_TRUE(*(*db)->OfferBest("gemm_copy", (*best)[0].result, 2));
  EXPECT_EQ((*db)->LoadBest()->size(), 2u);
}

TEST_P(SchemaTest, RefusesADatabaseFromANewerVersion) {
  {
    auto db = TuningDb::Open(path);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)->database().Exec("INSERT INTO schema_version VALUES(999)").ok());
  }
  auto reopened = TuningDb::Open(path);
  ASSERT_FALSE(reopened.ok());
  EXPECT_EQ(reopened.status().code(), Code::kFailedPrecondition);
  EXPECT_NE(reopened.status().message().find("999"), std::string::npos);
}

// A second writer (a standby coordinator) waits until the first one's
// connection ends, then finds everything the first one committed.
// (An SQLite file has one coordinator.)
class PostgresWritersTest : public SchemaTest {};
INSTANTIATE_TEST_SUITE_P(, PostgresWritersTest, ::testing::Values(DbKind::kPostgres),
                         testing::DbKindName);

TEST_P(PostgresWritersTest, SecondWriterStandsByUntilTheFirstIsGone) {
  auto first = TuningDb::Open(path);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_TRUE((*first)->EnsureKernel("fp", "gemm", 7).ok());
  auto second = std::async(std::launch::async, [&] { return TuningDb::Open(path); });
  EXPECT_EQ(second.wait_for(std::chrono::milliseconds(1500)), std::future_status::timeout);
  first->reset();
  ASSERT_EQ(second.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  auto taken = second.get();
  ASSERT_TRUE(taken.ok()) << taken.status().ToString();
  EXPECT_EQ(*(*taken)->EnsureKernel("fp", "gemm", 99), 7);
}

// A second coordinator on the same SQLite file served beside the first, each
// resuming the same jobs; it is refused, naming the holder, until the first
// is gone.
class SqliteWriterTest : public SchemaTest {};
INSTANTIATE_TEST_SUITE_P(, SqliteWriterTest, ::testing::Values(DbKind::kSqlite),
                         testing::DbKindName);

TEST_P(SqliteWriterTest, ASecondWriterIsRefusedNamingTheFirstUntilItIsGone) {
  auto first = TuningDb::Open(path);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto second = TuningDb::Open(path);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), Code::kFailedPrecondition);
  EXPECT_NE(second.status().message().find("has another coordinator (process " +
                                           std::to_string(getpid()) + " holds " + path + ".lock)"),
            std::string::npos)
      << second.status().message();
  // Readers (scripts, tests) open the file as before.
  EXPECT_TRUE(Database::Open(path, false).ok());
  first->reset();
  EXPECT_TRUE(TuningDb::Open(path).ok());
}

// Text that is not UTF-8 (a compiler's output may be anything) is kept by
// SQLite as it is and by PostgreSQL with U+FFFD in place of what is not.
TEST_P(TuningDbTest, DiagnosticsThatAreNotUtf8AreStored) {
  BuildRow build{"X=0", false, "", "", std::string("bad \xff\x00 byte", 11), "", {}};
  ASSERT_TRUE(db_->PutBuild("fp1", "host", build).ok());
  auto builds = db_->LoadBuilds("fp1", "host");
  ASSERT_TRUE(builds.ok()) << builds.status().ToString();
  EXPECT_EQ(builds->at("X=0").diagnostics, GetParam() == DbKind::kSqlite
                                               ? build.diagnostics
                                               : "bad \xef\xbf\xbd\xef\xbf\xbd byte");
  build.diagnostics = "second";  // a rebuild replaces the row
  ASSERT_TRUE(db_->PutBuild("fp1", "host", build).ok());
  EXPECT_EQ(db_->LoadBuilds("fp1", "host")->at("X=0").diagnostics, "second");
}

TF_ON_BOTH_DATABASES(TuningDbTest);
TF_ON_BOTH_DATABASES(SchemaTest);

TEST(SchemaLocationTest, UnwritableLocationIsAClearError) {
  auto db = TuningDb::Open("/nonexistent-dir/x/t.db");
  ASSERT_FALSE(db.ok());
  EXPECT_NE(db.status().message().find("/nonexistent-dir/x/t.db"), std::string::npos);
}

TEST(SchemaLocationTest, UnreachableServerIsAClearErrorWithoutThePassword) {
  const std::string url =
      "postgresql://tf:s3cret@127.0.0.1:" + std::to_string(testing::FreePort()) + "/tunefleet";
  auto db = TuningDb::Open(url);
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().code(), Code::kUnavailable);
  const std::string& message = db.status().message();
  EXPECT_NE(message.find("postgresql://tf@127.0.0.1:"), std::string::npos) << message;
  EXPECT_EQ(message.find("s3cret"), std::string::npos) << message;
}

}  // namespace
}  // namespace tf::db
