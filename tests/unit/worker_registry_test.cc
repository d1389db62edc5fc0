// The worker registry, driven directly over a real database (SQLite, and
// PostgreSQL): owners, liveness, expiry, forgetting silent workers (whose
// ids keep their owners, across a restart too) and their coming back.
#include "coordinator/worker_registry.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "common/files.h"
#include "db/schema.h"
#include "tests/test_util.h"

namespace tf::coordinator {
namespace {

constexpr int64_t kHeartbeatIntervalMs = 100;
constexpr int64_t kLeaseTtlMs = 1000;
constexpr int64_t kRetentionMs = 5000;

using testing::DbKind;

class WorkerRegistryTest : public ::testing::TestWithParam<DbKind> {
 protected:
  void SetUp() override {
    database_ = std::make_unique<testing::TestDatabase>(GetParam(), dir_.path());
    auto db = db::TuningDb::Open(database_->location(), /*synchronous_full=*/false);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(*db);
    registry_ = Load();
    ASSERT_NE(registry_, nullptr);
  }

  std::unique_ptr<WorkerRegistry> Load() {
    const WorkerRegistry::Options options{.heartbeat_interval_ms = kHeartbeatIntervalMs,
                                          .lease_ttl_ms = kLeaseTtlMs,
                                          .retention_ms = kRetentionMs};
    auto registry = WorkerRegistry::Load(*db_, options);
    EXPECT_TRUE(registry.ok()) << registry.status().ToString();
    return registry.ok() ? std::move(*registry) : nullptr;
  }

  std::string Register(int64_t owner_token = 0, const std::string& previous_id = "") {
    v1::RegisterRequest request;
    request.set_hostname("host");
    request.set_previous_worker_id(previous_id);
    v1::DeviceInfo* device = request.add_devices();
    device->set_index(0);
    device->set_device_class("cpu/test");
    auto id = registry_->Register(request, owner_token);
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    return id.ok() ? *id : "";
  }

  int64_t LastHeartbeat(const std::string& id) const {
    return registry_->workers().at(id).last_heartbeat_ms;
  }

  // Every worker last heard from now, then expired and stamped silent
  // since then, which it returns.
  int64_t SilenceAll() {
    const int64_t now = NowUnixMs();
    std::vector<std::string> ids;
    for (const auto& [id, w] : registry_->workers()) ids.push_back(id);
    for (const std::string& id : ids) EXPECT_TRUE(registry_->Heartbeat(id, now));
    EXPECT_EQ(registry_->ExpireSilent(now + kLeaseTtlMs + 1), ids);
    registry_->ForgetSilent(now + kLeaseTtlMs + 1, NoLeases);
    for (const std::string& id : ids) {
      EXPECT_EQ(registry_->workers().at(id).row.silent_since_ms, now);
    }
    return now;
  }

  std::vector<std::string> ListedIds() const {
    std::vector<std::string> ids;
    for (const auto& info : registry_->List(NowUnixMs(), NoLeases)) ids.push_back(info.worker_id());
    return ids;
  }

  // The ids of the stored workers, of the forgotten ones when `forgotten`.
  std::vector<std::string> StoredIds(bool forgotten = false) const {
    auto rows = db_->LoadWorkers();
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    std::vector<std::string> ids;
    if (rows.ok()) {
      for (const auto& row : *rows) {
        if (row.forgotten == forgotten) ids.push_back(row.id);
      }
    }
    std::sort(ids.begin(), ids.end());
    return ids;
  }

  // Registers a worker of `owner_token`, silences it and forgets it.
  std::string ForgottenWorker(int64_t owner_token) {
    const std::string id = Register(owner_token);
    const int64_t silent_since = SilenceAll();
    registry_->ForgetSilent(silent_since + kRetentionMs + 1, NoLeases);
    EXPECT_EQ(registry_->workers().count(id), 0u);
    return id;
  }

  // One OK result recorded from the worker's report.
  void RecordResultOf(const std::string& worker_id) {
    db::JobRow job;
    job.kernel = "gemm";
    job.fingerprint = "fp1";
    job.spec.set_name("gemm");
    job.created_ms = job.updated_ms = 1000;
    ASSERT_TRUE(db_->EnsureKernel("fp1", "gemm", 1000).ok());
    ASSERT_TRUE(db_->InsertJob(job).ok());
    std::vector<db::CandidateRow> candidates = {
        {0, job.id, "X=0", "M=64", db::CandidateState::kLeased, 0}};
    ASSERT_TRUE(db_->InsertCandidates(candidates).ok());
    db::ResultRow result;
    result.candidate_id = candidates[0].id;
    result.job_id = job.id;
    result.fingerprint = "fp1";
    result.config_key = "X=0";
    result.problem_key = "M=64";
    result.device_class = "cpu/test";
    result.worker = worker_id;
    result.status = v1::RESULT_STATUS_OK;
    result.timing.set_median_ns(500);
    auto inserted = db_->InsertResult(result);
    ASSERT_TRUE(inserted.ok()) << inserted.status().ToString();
    ASSERT_TRUE(*inserted);
  }

  static int64_t NoLeases(const std::string&) { return 0; }

  testing::TempDir dir_;
  std::unique_ptr<testing::TestDatabase> database_;
  std::unique_ptr<db::TuningDb> db_;
  std::unique_ptr<WorkerRegistry> registry_;
};

TEST_P(WorkerRegistryTest, OwnerCheckRefusesAnotherTokensWorker) {
  const std::string id = Register(/*owner_token=*/7);
  auth::Caller other{.token_id = 8, .role = v1::ROLE_WORKER, .own_only = true};
  EXPECT_EQ(registry_->CheckOwner(id, other).code(), Code::kPermissionDenied);
  auth::Caller owner{.token_id = 7, .role = v1::ROLE_WORKER, .own_only = true};
  EXPECT_TRUE(registry_->CheckOwner(id, owner).ok());
  // Not limited to its own, or naming no registered worker: nothing to refuse.
  other.own_only = false;
  EXPECT_TRUE(registry_->CheckOwner(id, other).ok());
  other.own_only = true;
  EXPECT_TRUE(registry_->CheckOwner("unknown", other).ok());
}

TEST_P(WorkerRegistryTest, NewWorkersGetDistinctIds) {
  const std::string first = Register();
  const std::string second = Register();
  EXPECT_NE(first, second);
  EXPECT_EQ(ListedIds(),
            (std::vector<std::string>{std::min(first, second), std::max(first, second)}));
  EXPECT_EQ(StoredIds().size(), 2u);
}

TEST_P(WorkerRegistryTest, AliveForThreeHeartbeatIntervals) {
  const std::string id = Register();
  const auto& worker = registry_->workers().at(id);
  const int64_t last = LastHeartbeat(id);
  EXPECT_TRUE(registry_->Alive(worker, last + 3 * kHeartbeatIntervalMs));
  EXPECT_FALSE(registry_->Alive(worker, last + 3 * kHeartbeatIntervalMs + 1));
  ASSERT_TRUE(registry_->Heartbeat(id, last + 10 * kHeartbeatIntervalMs));
  EXPECT_TRUE(registry_->Alive(worker, last + 12 * kHeartbeatIntervalMs));
}

TEST_P(WorkerRegistryTest, SilentForALeaseTtlExpiresAndMustRegisterAgain) {
  const std::string id = Register();
  const int64_t last = LastHeartbeat(id);
  EXPECT_TRUE(registry_->ExpireSilent(last + kLeaseTtlMs).empty());
  EXPECT_NE(registry_->FindDevice(id, 0), nullptr);
  EXPECT_EQ(registry_->ExpireSilent(last + kLeaseTtlMs + 1), std::vector<std::string>{id});
  EXPECT_EQ(registry_->FindDevice(id, 0), nullptr);
  EXPECT_FALSE(registry_->Heartbeat(id, last + kLeaseTtlMs + 2));
  EXPECT_EQ(Register(0, id), id);
  EXPECT_NE(registry_->FindDevice(id, 0), nullptr);
  EXPECT_TRUE(registry_->Heartbeat(id, NowUnixMs()));
}

TEST_P(WorkerRegistryTest, ForgetsAWorkerSilentPastRetentionUnlessItHoldsALease) {
  const std::string idle = Register();
  const std::string leasing = Register();
  const int64_t silent_since = SilenceAll();
  const auto leases_of = [&leasing](const std::string& id) -> int64_t {
    return id == leasing ? 1 : 0;
  };
  // Silent for the retention, not past it: both kept.
  registry_->ForgetSilent(silent_since + kRetentionMs, leases_of);
  EXPECT_EQ(ListedIds().size(), 2u);
  EXPECT_EQ(StoredIds().size(), 2u);

  registry_->ForgetSilent(silent_since + kRetentionMs + 1, leases_of);
  EXPECT_EQ(ListedIds(), std::vector<std::string>{leasing});
  EXPECT_EQ(StoredIds(), std::vector<std::string>{leasing});
  EXPECT_EQ(StoredIds(/*forgotten=*/true), std::vector<std::string>{idle});
}

TEST_P(WorkerRegistryTest, ComesBackUnderItsIdWithItsResultsCount) {
  const std::string id = Register();
  RecordResultOf(id);
  const int64_t silent_since = SilenceAll();
  registry_->ForgetSilent(silent_since + kRetentionMs + 1, NoLeases);
  ASSERT_TRUE(ListedIds().empty());

  EXPECT_EQ(Register(0, id), id);
  EXPECT_EQ(registry_->workers().at(id).results_reported, 1);
  EXPECT_EQ(StoredIds(), std::vector<std::string>{id});
}

TEST_P(WorkerRegistryTest, LoadsStoredWorkersExpiredWithTheirResults) {
  const std::string id = Register(/*owner_token=*/3);
  RecordResultOf(id);
  registry_ = Load();
  ASSERT_NE(registry_, nullptr);
  ASSERT_EQ(registry_->workers().count(id), 1u);
  const auto& worker = registry_->workers().at(id);
  EXPECT_TRUE(worker.expired);
  EXPECT_EQ(worker.results_reported, 1);
  EXPECT_EQ(worker.row.owner_token, 3);
  EXPECT_FALSE(registry_->Heartbeat(id, NowUnixMs()));
}

// The security review's finding: forgotten, a worker's id lost its owner,
// and another token could register under it (refusing the real worker when
// it came back) or report for the candidates still leased to it.
TEST_P(WorkerRegistryTest, AForgottenWorkersIdStaysItsTokensAcrossALoad) {
  const std::string id = ForgottenWorker(/*owner_token=*/7);
  auth::Caller other{.token_id = 8, .role = v1::ROLE_WORKER, .own_only = true};
  auth::Caller owner{.token_id = 7, .role = v1::ROLE_WORKER, .own_only = true};
  for (int load = 0; load < 2; ++load) {
    SCOPED_TRACE(load == 0 ? "as forgotten" : "loaded again");
    Status refused = registry_->CheckOwner(id, other);
    EXPECT_EQ(refused.code(), Code::kPermissionDenied);
    EXPECT_EQ(refused.message(), "worker " + id + " belongs to another token");
    EXPECT_TRUE(registry_->CheckOwner(id, owner).ok());
    // Not limited to its own: nothing to refuse, as for a registered worker.
    EXPECT_TRUE(registry_->CheckOwner(id, {.token_id = 8}).ok());
    // An id no worker ever had is anyone's to take.
    EXPECT_TRUE(registry_->CheckOwner("never-registered", other).ok());
    registry_ = Load();  // a restart of the coordinator
    ASSERT_NE(registry_, nullptr);
  }
}

TEST_P(WorkerRegistryTest, AForgottenWorkerIsKeptUnlistedAcrossALoad) {
  const std::string kept = Register(/*owner_token=*/7);
  const std::string id = Register(/*owner_token=*/7);
  const int64_t silent_since = SilenceAll();
  registry_->ForgetSilent(silent_since + kRetentionMs + 1, [&kept](const std::string& w) {
    return w == kept ? int64_t{1} : int64_t{0};
  });
  EXPECT_EQ(registry_->workers().count(id), 0u);
  EXPECT_EQ(ListedIds(), std::vector<std::string>{kept});
  // Its row stays, marked, with the token that owns its id.
  EXPECT_EQ(StoredIds(/*forgotten=*/true), std::vector<std::string>{id});
  EXPECT_EQ(StoredIds(), std::vector<std::string>{kept});
  registry_ = Load();
  ASSERT_NE(registry_, nullptr);
  EXPECT_EQ(registry_->workers().count(id), 0u);
  EXPECT_EQ(ListedIds(), std::vector<std::string>{kept});
  EXPECT_EQ(registry_->FindDevice(id, 0), nullptr);
  EXPECT_FALSE(registry_->Heartbeat(id, NowUnixMs()));  // it must register again
  EXPECT_EQ(StoredIds(/*forgotten=*/true), std::vector<std::string>{id});
}

TEST_P(WorkerRegistryTest, TheOwnerComesBackUnderItsForgottenIdAfterALoad) {
  const std::string id = Register(/*owner_token=*/7);
  RecordResultOf(id);
  const int64_t silent_since = SilenceAll();
  registry_->ForgetSilent(silent_since + kRetentionMs + 1, NoLeases);
  registry_ = Load();
  ASSERT_NE(registry_, nullptr);
  auth::Caller other{.token_id = 8, .role = v1::ROLE_WORKER, .own_only = true};
  auth::Caller owner{.token_id = 7, .role = v1::ROLE_WORKER, .own_only = true};
  EXPECT_EQ(registry_->CheckOwner(id, other).code(), Code::kPermissionDenied);
  ASSERT_TRUE(registry_->CheckOwner(id, owner).ok());

  EXPECT_EQ(Register(7, id), id);
  EXPECT_EQ(registry_->workers().at(id).results_reported, 1);
  EXPECT_EQ(registry_->workers().at(id).row.owner_token, 7);
  EXPECT_EQ(ListedIds(), std::vector<std::string>{id});
  EXPECT_EQ(StoredIds(), std::vector<std::string>{id});
  EXPECT_TRUE(StoredIds(/*forgotten=*/true).empty());
  EXPECT_EQ(registry_->CheckOwner(id, other).code(), Code::kPermissionDenied);
  // Registered again, it is registered after a restart too.
  registry_ = Load();
  ASSERT_NE(registry_, nullptr);
  EXPECT_EQ(registry_->workers().count(id), 1u);
  EXPECT_EQ(registry_->CheckOwner(id, other).code(), Code::kPermissionDenied);
}

// Version 11 keeps the ids of the workers that earlier versions forgot (and
// deleted) and that held leases: owned by no token, no worker token can take
// one over.
TEST_P(WorkerRegistryTest, IdsForgottenBeforeVersion11BelongToNoToken) {
  testing::TempDir dir;
  testing::TestDatabase database(GetParam(), dir.path());
  {
    auto raw = db::Database::Open(database.location(), false);
    ASSERT_TRUE(raw.ok()) << raw.status().ToString();
    ASSERT_TRUE(db::Migrate(**raw, 10).ok());
    for (const char* sql :
         {"INSERT INTO workers(id, hostname, devices, registered_ms, owner_token) "
          "VALUES('kept', 'host', '', 1, 3)",
          "INSERT INTO leases(job_id, worker_id, device_index, artifact_sha256, active) "
          "VALUES(1, 'gone', 0, '', 0)",
          "INSERT INTO leases(job_id, worker_id, device_index, artifact_sha256, active) "
          "VALUES(1, 'gone', 0, '', 0)",
          "INSERT INTO leases(job_id, worker_id, device_index, artifact_sha256, active) "
          "VALUES(1, 'kept', 0, '', 0)"}) {
      ASSERT_TRUE((*raw)->Exec(sql).ok()) << sql;
    }
  }
  auto db = db::TuningDb::Open(database.location(), /*synchronous_full=*/false);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto rows = (*db)->LoadWorkers();
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 2u);
  std::sort(rows->begin(), rows->end(),
            [](const db::WorkerRow& a, const db::WorkerRow& b) { return a.id < b.id; });
  EXPECT_EQ((*rows)[0].id, "gone");
  EXPECT_TRUE((*rows)[0].forgotten);
  EXPECT_EQ((*rows)[0].owner_token, 0);
  EXPECT_EQ((*rows)[1].id, "kept");
  EXPECT_FALSE((*rows)[1].forgotten);
  EXPECT_EQ((*rows)[1].owner_token, 3);

  auto registry = WorkerRegistry::Load(**db, {.heartbeat_interval_ms = kHeartbeatIntervalMs,
                                              .lease_ttl_ms = kLeaseTtlMs,
                                              .retention_ms = kRetentionMs});
  ASSERT_TRUE(registry.ok()) << registry.status().ToString();
  EXPECT_EQ((*registry)->workers().count("gone"), 0u);
  auth::Caller worker{.token_id = 8, .role = v1::ROLE_WORKER, .own_only = true};
  EXPECT_EQ((*registry)->CheckOwner("gone", worker).code(), Code::kPermissionDenied);
}

TF_ON_BOTH_DATABASES(WorkerRegistryTest);

}  // namespace
}  // namespace tf::coordinator
