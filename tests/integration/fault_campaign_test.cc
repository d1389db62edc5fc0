// Fault campaign: real coordinator and worker processes on 127.0.0.1 with a
// real database (each test on an SQLite file and on a PostgreSQL server of
// its own), hit by faults at random moments. Each scenario is
// repeated with seeded random timing (the seed is printed; TF_FAULT_SEED
// replays one) and bounded in time, and afterwards the database must hold
// what users rely on (ExpectFleetInvariants): every candidate of every job
// has exactly one result, no job is lost or stuck, integrity_check is ok.
#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "common/files.h"
#include "db/database.h"
#include "tests/test_util.h"

namespace tf::testing {
namespace {

namespace v1 = ::tunefleet::v1;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr const char* kSlowSpec = "tests/integration/data/slow/slow.yaml";

// 24 candidates of at least `ms` each: a job long enough to strike into.
kernelspec::LoadedSpec SlowSpec(const std::string& label, double ms = 100) {
  return LoadTestSpec(kSlowSpec, [&](v1::KernelSpec& spec) {
    spec.mutable_benchmark()->set_min_time_ms(ms);
    spec.mutable_benchmark()->set_max_repeats(1000000);
    spec.mutable_benchmark()->set_timeout_s(120);
    spec.mutable_target()->set_label(label);
  });
}

// Pids of every descendant of `pid`, from /proc.
std::vector<pid_t> Descendants(pid_t pid) {
  std::multimap<pid_t, pid_t> children;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    std::getline(stat, line);
    auto close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    char state;
    pid_t parent;
    if (rest >> state >> parent) children.emplace(parent, std::stoi(name));
  }
  std::vector<pid_t> out;
  std::vector<pid_t> todo = {pid};
  while (!todo.empty()) {
    pid_t p = todo.back();
    todo.pop_back();
    auto [begin, end] = children.equal_range(p);
    for (auto it = begin; it != end; ++it) {
      out.push_back(it->second);
      todo.push_back(it->second);
    }
  }
  return out;
}

class FaultCampaignTest : public ::testing::TestWithParam<DbKind> {
 protected:
  void SetUp() override {
    const char* fixed = std::getenv("TF_FAULT_SEED");
    seed_ = fixed ? std::stoull(fixed) : std::random_device()();
    rng_.seed(seed_);
    std::cout << "fault campaign seed " << seed_ << " (replay: TF_FAULT_SEED=" << seed_ << ")\n";
    RecordProperty("seed", std::to_string(seed_));
  }

  void StartCoordinator(std::vector<std::string> extra = {}, std::string db_path = "") {
    std::vector<std::string> args = {"--lease-ttl-ms", "1500", "--heartbeat-ms", "300"};
    args.insert(args.end(), extra.begin(), extra.end());
    coordinator_ = std::make_unique<CoordinatorProcess>(
        dir_.path(), args, db_path.empty() ? database_.location() : db_path);
    coordinator_->Start();
    auto client = client::Client::Connect(coordinator_->address());
    ASSERT_TRUE(client.ok());
    client_ = std::move(*client);
  }

  void TearDown() override {
    if (HasFailure()) {
      std::cerr << "seed " << seed_ << "\ncoordinator log:\n" << coordinator_->Log() << "\n";
      for (auto& w : workers_) std::cerr << "worker log:\n" << w->Log() << "\n";
    }
  }

  // `name` (worker<N> unless given) names its log and its cache folder.
  Process& AddWorker(const std::string& label, std::vector<std::string> extra = {},
                     std::string name = "") {
    if (name.empty()) name = "worker" + std::to_string(workers_.size());
    extra.insert(extra.end(), {"--label", label, "--max-candidates", "4"});
    workers_.push_back(StartWorker(coordinator_->address(), dir_.path(), name, "cpu:1", extra));
    return *workers_.back();
  }

  milliseconds Random(int from_ms, int to_ms) {
    return milliseconds(std::uniform_int_distribution<int>(from_ms, to_ms)(rng_));
  }

  int64_t Done(int64_t job_id) {
    auto job = client_->GetJob(job_id);
    return job.ok() ? job->candidates_done() : -1;
  }

  void ExpectSucceededWithoutFailures(int64_t job_id, seconds timeout) {
    v1::Job done = WaitForJobEnd(*client_, job_id, timeout);
    EXPECT_EQ(done.state(), v1::JOB_STATE_SUCCEEDED) << done.DebugString();
    EXPECT_EQ(done.candidates_failed(), 0) << done.DebugString();
    EXPECT_EQ(done.candidates_done(), done.candidates_total());
  }

  TempDir dir_;
  TestDatabase database_{GetParam(), dir_.path()};
  uint64_t seed_ = 0;
  std::mt19937_64 rng_;
  std::unique_ptr<CoordinatorProcess> coordinator_;
  std::unique_ptr<client::Client> client_;
  std::vector<std::unique_ptr<Process>> workers_;
};

TEST_P(FaultCampaignTest, WorkersKilledAtRandomPointsLoseNothing) {
  StartCoordinator({"--db-sync", "normal"});
  for (int round = 0; round < 3; ++round) {
    // A label per round: a fresh device class, so nothing is reused.
    const std::string label = "kill" + std::to_string(round);
    v1::Job job = SubmitSpec(*client_, SlowSpec(label, 150));
    ASSERT_GT(job.job_id(), 0);
    // Whatever the worker is doing then: registering, fetching, running a
    // batch, reporting.
    for (int kill = 0; kill < 2; ++kill) {
      Process& doomed = AddWorker(label);
      std::this_thread::sleep_for(Random(200, 2500));
      std::cout << "round " << round << ": SIGKILL worker at " << Done(job.job_id())
                << " candidates done\n";
      doomed.Kill();
    }
    AddWorker(label);
    ExpectSucceededWithoutFailures(job.job_id(), seconds(60));
  }
  ExpectFleetInvariants(coordinator_->db_path());
}

// Whether `pid` still runs: gone, or a zombie waiting to be reaped, is not.
bool Running(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}

TEST_P(FaultCampaignTest, RunnersDieWithTheirWorker) {
  // Runners lead process groups of their own, so a SIGKILL of the worker's
  // group does not reach them; left running they would time candidates of
  // the next worker on the same cores, or hold a GPU.
  StartCoordinator();
  // Candidates of 30 s: a runner reads its stdin, and ends when it closes, only between them.
  v1::Job job = SubmitSpec(*client_, SlowSpec("orphans", 30000));
  ASSERT_GT(job.job_id(), 0);
  Process& doomed = AddWorker("orphans");
  std::vector<pid_t> runners;
  ASSERT_TRUE(WaitFor(
      [&] {
        runners.clear();
        for (pid_t p : Descendants(doomed.pid())) {
          std::ifstream comm("/proc/" + std::to_string(p) + "/comm");
          std::string name;
          // comm keeps the first 15 characters of the name.
          if (std::getline(comm, name) && name == "tunefleet-runne") runners.push_back(p);
        }
        return !runners.empty();
      },
      seconds(60)));
  std::this_thread::sleep_for(milliseconds(500));  // running a candidate, not starting
  doomed.Kill();
  for (pid_t runner : runners) {
    EXPECT_TRUE(WaitFor([&] { return !Running(runner); }, seconds(5)))
        << "runner " << runner << " outlived its worker";
  }
}

TEST_P(FaultCampaignTest, CoordinatorKilledAndRestartedWhileWorkersRun) {
  StartCoordinator();  // --db-sync full: what production runs
  v1::Job job = SubmitSpec(*client_, SlowSpec("restart", 200));
  ASSERT_GT(job.job_id(), 0);
  AddWorker("restart");
  AddWorker("restart");
  int64_t done_at_last_kill = -1;
  for (int kill = 0; kill < 3; ++kill) {
    // The first strike may land while the job is built; the next ones once
    // the workers made progress since the last.
    if (kill > 0) {
      ASSERT_TRUE(WaitFor([&] { return Done(job.job_id()) > done_at_last_kill; }, seconds(60)));
    }
    std::this_thread::sleep_for(Random(0, 1500));
    done_at_last_kill = Done(job.job_id());
    std::cout << "SIGKILL coordinator at " << done_at_last_kill << " candidates done\n";
    coordinator_->Kill();
    std::this_thread::sleep_for(Random(0, 1500));
    coordinator_->Start();  // same database and port; the workers find it again
  }
  ExpectSucceededWithoutFailures(job.job_id(), seconds(90));
  coordinator_->Kill();
  ExpectFleetInvariants(coordinator_->db_path());
}

// docs/coordinator.md: workers find a restarted coordinator within about a
// second, and a lease that was out when it died is reported within the lease
// time-to-live after the restart (the default 10 s), not run again.
TEST_P(FaultCampaignTest, ALeaseOutWhileTheCoordinatorRestartsIsReportedNotRunAgain) {
  coordinator_ = std::make_unique<CoordinatorProcess>(
      dir_.path(),
      // One compiler run at a time, 4 configurations each: every lease holds 4 candidates.
      std::vector<std::string>{"--lease-ttl-ms", "10000", "--heartbeat-ms", "1000", "--build-jobs",
                               "1", "--batch-size", "4"},
      database_.location());
  coordinator_->Start();
  auto client = client::Client::Connect(coordinator_->address());
  ASSERT_TRUE(client.ok());
  client_ = std::move(*client);
  v1::Job job = SubmitSpec(*client_, SlowSpec("restart", 400));
  ASSERT_GT(job.job_id(), 0);
  AddWorker("restart");
  // Leases of 4 candidates of 0.4 s: one is out after the first result.
  ASSERT_TRUE(WaitFor([&] { return Done(job.job_id()) % 4 == 1; }, seconds(60)));
  coordinator_->Kill();
  std::this_thread::sleep_for(milliseconds(500));
  coordinator_->Start();
  ExpectSucceededWithoutFailures(job.job_id(), seconds(90));
  const std::string log = coordinator_->Log();
  EXPECT_NE(log.find("leases out at the restart: 1;"), std::string::npos) << log;
  EXPECT_EQ(log.find("expired"), std::string::npos) << log;
  coordinator_->Kill();
  ExpectFleetInvariants(coordinator_->db_path());
}

TEST_P(FaultCampaignTest, StragglersLeasesAreFinishedElsewhere) {
  StartCoordinator({"--db-sync", "normal"});
  v1::Job job = SubmitSpec(*client_, SlowSpec("straggle", 50));
  ASSERT_GT(job.job_id(), 0);
  // The straggler heartbeats but its runner makes no progress at all: it is
  // stopped whenever it appears, until the job has ended.
  Process& straggler = AddWorker("straggle");
  std::atomic<bool> freeze{true};
  std::thread freezer([&] {
    while (freeze) {
      for (pid_t p : Descendants(straggler.pid())) kill(p, SIGSTOP);
      std::this_thread::sleep_for(milliseconds(20));
    }
  });
  ASSERT_TRUE(WaitFor(
      [&] {
        auto workers = client_->ListWorkers();
        return workers.ok() && !workers->empty() && (*workers)[0].active_leases() > 0;
      },
      seconds(120)));
  std::this_thread::sleep_for(Random(0, 1000));
  AddWorker("straggle");
  AddWorker("straggle");
  // Without backups the frozen straggler would keep its lease (it still
  // heartbeats) and the job would never end.
  v1::Job done = WaitForJobEnd(*client_, job.job_id(), seconds(90));
  freeze = false;
  freezer.join();
  for (pid_t p : Descendants(straggler.pid())) kill(p, SIGCONT);
  EXPECT_EQ(done.state(), v1::JOB_STATE_SUCCEEDED) << done.DebugString();
  EXPECT_EQ(done.candidates_failed(), 0);
  EXPECT_NE(coordinator_->Log().find("is straggling"), std::string::npos);
  ExpectFleetInvariants(coordinator_->db_path());
}

TEST_P(FaultCampaignTest, CorruptedCachedArtifactIsDetectedAndFetchedAgain) {
  StartCoordinator({"--db-sync", "normal"});
  v1::Job job = SubmitSpec(*client_, SlowSpec("corrupt", 150));
  ASSERT_GT(job.job_id(), 0);
  AddWorker("corrupt");
  const std::string cache = dir_ / "worker0-cache";
  ASSERT_TRUE(WaitFor([&] { return Done(job.job_id()) >= 1; }, seconds(120)));
  // A byte of every cached artifact flipped while the worker is down (a disk
  // fault: the cache only renames checked files into place). While it runs,
  // a flip could land between its check of a file and a runner loading it.
  workers_.back()->Kill();
  int corrupted = 0;
  for (const auto& entry : std::filesystem::directory_iterator(cache)) {
    const std::string path = entry.path();
    if (path.find(".partial") != std::string::npos) continue;
    auto bytes = ReadFile(path);
    if (!bytes.ok() || bytes->empty()) continue;
    size_t at = std::uniform_int_distribution<size_t>(0, bytes->size() - 1)(rng_);
    (*bytes)[at] = static_cast<char>((*bytes)[at] ^ 0x5a);
    ASSERT_TRUE(WriteFileAtomic(path, *bytes).ok());
    ++corrupted;
  }
  ASSERT_GT(corrupted, 0);
  Process& worker = AddWorker("corrupt", {}, "worker0");  // the same cache
  ExpectSucceededWithoutFailures(job.job_id(), seconds(90));
  EXPECT_NE(worker.Log().find("is corrupted"), std::string::npos);
  ExpectFleetInvariants(coordinator_->db_path());
}

// A tmpfs of its own for the database, which the test can fill or make
// read-only. Needs root (CI runs as root).
class SmallDisk {
 public:
  explicit SmallDisk(const std::string& path) : path_(path) {
    std::filesystem::create_directories(path);
    mounted_ = mount("tunefleet-test", path.c_str(), "tmpfs", 0, "size=32m") == 0;
  }
  ~SmallDisk() {
    if (mounted_) umount2(path_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }
  // Writes a file until the disk is full.
  void Fill() {
    std::ofstream out(path_ + "/filler", std::ios::binary);
    std::string block(1 << 16, 'x');
    while (out.write(block.data(), block.size())) {
    }
  }
  void Unfill() { std::filesystem::remove(path_ + "/filler"); }
  bool Remount(bool read_only) {
    return mount(nullptr, path_.c_str(), nullptr, MS_REMOUNT | (read_only ? MS_RDONLY : 0),
                 "size=32m") == 0;
  }

 private:
  std::string path_;
  bool mounted_ = false;
};

// The coordinator's own disk filling up: SQLite's only (a PostgreSQL
// server's disk is its operator's to watch).
class SqliteDiskTest : public FaultCampaignTest {};
INSTANTIATE_TEST_SUITE_P(, SqliteDiskTest, ::testing::Values(DbKind::kSqlite), DbKindName);

TEST_P(SqliteDiskTest, FullDiskIsAClearErrorAndNothingUnstoredIsAcknowledged) {
  SmallDisk disk(dir_ / "dbdisk");
  if (!disk.mounted()) GTEST_SKIP() << "needs root to mount a small tmpfs for the database";
  const std::string db_path = dir_ / "dbdisk/tunefleet.db";
  StartCoordinator({}, db_path);
  v1::Job job = SubmitSpec(*client_, SlowSpec("full", 100));
  ASSERT_GT(job.job_id(), 0);
  AddWorker("full");
  AddWorker("full");
  ASSERT_TRUE(WaitFor([&] { return Done(job.job_id()) >= 2; }, seconds(120)));
  std::this_thread::sleep_for(Random(0, 1000));

  disk.Fill();
  auto refused = RunCli(coordinator_->address(),
                        {"submit", SourcePath(kSlowSpec), "--priority", "3", "--json"});
  // While the disk is full the workers go on reporting: what the coordinator
  // says is done must be in the database, read independently.
  for (int check = 0; check < 10; ++check) {
    int64_t said_done = Done(job.job_id());
    auto db = db::Database::Open(db_path, false);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    auto count = (*db)->Prepare("SELECT COUNT(*) FROM results WHERE job_id = ?");
    ASSERT_TRUE(count.ok());
    count->Bind(1, job.job_id());
    ASSERT_TRUE(*count->Step());
    EXPECT_LE(said_done, count->Int(0)) << "acknowledged but not stored";
    std::this_thread::sleep_for(Random(50, 300));
  }
  if (refused.exit_code != 0) {
    EXPECT_NE(refused.output.find("full"), std::string::npos) << refused.output;
  }
  EXPECT_NE(coordinator_->Log().find("database or disk is full"), std::string::npos);
  disk.Unfill();

  ExpectSucceededWithoutFailures(job.job_id(), seconds(90));
  // A job the CLI was told was accepted must exist after a crash.
  coordinator_->Kill();
  coordinator_->Start();
  Result<std::vector<v1::Job>> jobs = Status::Unavailable("not asked yet");
  ASSERT_TRUE(WaitFor([&] { return (jobs = client_->ListJobs(100)).ok(); }, seconds(30)))
      << jobs.status().ToString();
  EXPECT_EQ(jobs->size(), refused.exit_code == 0 ? 2u : 1u) << refused.output;
  for (const auto& j : *jobs) {
    if (j.job_id() != job.job_id()) client_->Cancel(j.job_id());
  }
  coordinator_->Kill();
  ExpectFleetInvariants(db_path);

  // A read-only database is refused at start, with the path and the reason.
  ASSERT_TRUE(disk.Remount(/*read_only=*/true));
  auto started = RunProcess({BinaryPath("bin/tunefleet-coordinator"), "--plaintext", "--listen",
                             "127.0.0.1:0", "--db", db_path, "--artifacts", dir_ / "artifacts"},
                            WithTimeout(30));
  ASSERT_TRUE(started.ok());
  EXPECT_NE(started->exit_code, 0);
  EXPECT_NE(started->output.find(db_path), std::string::npos) << started->output;
  EXPECT_NE(started->output.find("read-only"), std::string::npos) << started->output;
  disk.Remount(/*read_only=*/false);
}

TF_ON_BOTH_DATABASES(FaultCampaignTest);

}  // namespace
}  // namespace tf::testing
