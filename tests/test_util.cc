#include "tests/test_util.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include "common/files.h"
#include "db/database.h"

namespace tf::testing {

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "tunefleet-test-XXXXXX").string();
  if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  if (!std::getenv("TF_KEEP_TEST_DIRS")) std::filesystem::remove_all(path_, ec);
}

std::unique_ptr<Process> Process::Start(const std::vector<std::string>& argv,
                                        const std::string& log_path) {
  SpawnOptions options;
  options.log_path = log_path;
  auto child = ChildProcess::Spawn(argv, options);
  if (!child.ok())
    throw std::runtime_error("cannot start " + argv[0] + ": " + child.status().ToString());
  auto process = std::unique_ptr<Process>(new Process);
  process->child_ = std::move(*child);
  process->log_path_ = log_path;
  return process;
}

std::string Process::Log() const {
  auto log = ReadFile(log_path_);
  return log.ok() ? *log : "";
}

std::string BinaryPath(const std::string& relative) {
  return std::string(TF_BINARY_DIR) + "/" + relative;
}
std::string SourcePath(const std::string& relative) {
  return std::string(TF_SOURCE_DIR) + "/" + relative;
}

std::string ReadPortFile(const std::string& path) {
  auto text = ReadFile(path);
  return text.ok() ? text->substr(0, text->find('\n')) : "";
}

bool WaitFor(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return condition();
}

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    throw std::runtime_error("cannot find a free port on 127.0.0.1");
  }
  close(fd);
  return ntohs(address.sin_port);
}

namespace {

// Runs argv through env(1) with the NAME=VALUE settings, when there are any.
void WithEnvironment(const std::vector<std::string>& environment, std::vector<std::string>& argv) {
  if (environment.empty()) return;
  argv.insert(argv.begin(), environment.begin(), environment.end());
  argv.insert(argv.begin(), "/usr/bin/env");
}

// The folder of PostgreSQL's server programs: TF_POSTGRES_BIN, or the
// newest of Debian's /usr/lib/postgresql/VERSION/bin.
std::string PostgresBin() {
  if (const char* bin = std::getenv("TF_POSTGRES_BIN")) return bin;
  std::string newest;
  int newest_version = -1;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/usr/lib/postgresql", ec)) {
    const std::string version = entry.path().filename();
    if (version.find_first_not_of("0123456789") != std::string::npos) continue;
    if (std::filesystem::exists(entry.path() / "bin/initdb") &&
        std::stoi(version) > newest_version) {
      newest_version = std::stoi(version);
      newest = entry.path() / "bin";
    }
  }
  if (newest.empty()) {
    throw std::runtime_error(
        "no PostgreSQL server programs in /usr/lib/postgresql/*/bin (install the postgresql "
        "package: scripts/install-deps.sh) and TF_POSTGRES_BIN is not set");
  }
  return newest;
}

// The server refuses to run as root: as root, run it as `postgres`.
std::vector<std::string> AsServerUser(std::vector<std::string> argv) {
  if (geteuid() != 0) return argv;
  argv.insert(argv.begin(),
              {"setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--"});
  return argv;
}

}  // namespace

PostgresCluster::PostgresCluster() {
  std::string pattern = (std::filesystem::temp_directory_path() / "tunefleet-pg-XXXXXX").string();
  if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  dir_ = pattern;
  if (geteuid() == 0) {
    const passwd* user = getpwnam("postgres");
    if (user == nullptr) {
      throw std::runtime_error(
          "running as root, the test PostgreSQL server runs as the user postgres, which does "
          "not exist (install the postgresql package: scripts/install-deps.sh)");
    }
    if (chown(dir_.c_str(), user->pw_uid, user->pw_gid) != 0) {
      throw std::runtime_error("cannot hand " + dir_ + " to the user postgres");
    }
  }
  const std::string bin = PostgresBin();
  auto initdb =
      RunProcess(AsServerUser({bin + "/initdb", "-D", dir_ + "/data", "-A", "trust", "-U",
                               "postgres", "-E", "UTF8", "--locale=C", "-N", "--no-instructions"}),
                 WithTimeout(120));
  if (!initdb.ok() || !initdb->success()) {
    throw std::runtime_error("initdb failed: " +
                             (initdb.ok() ? initdb->output : initdb.status().ToString()));
  }
  // A port taken between FreePort() and the server's bind: try another.
  for (int attempt = 0; attempt < 3 && !server_; ++attempt) {
    port_ = FreePort();
    auto server = Process::Start(AsServerUser({bin + "/postgres", "-D", dir_ + "/data", "-k", dir_,
                                               "-h", "127.0.0.1", "-p", std::to_string(port_), "-c",
                                               "max_connections=40", "-c", "shared_buffers=32MB"}),
                                 dir_ + "/server.log");
    const std::string probe = Url("postgres");
    bool ready = WaitFor(
        [&] {
          int status = 0;
          return server->Exited(&status) || db::Database::Open(probe, false).ok();
        },
        std::chrono::seconds(60));
    int status = 0;
    if (ready && !server->Exited(&status)) server_ = std::move(server);
  }
  if (!server_) {
    auto log = ReadFile(dir_ + "/server.log");
    throw std::runtime_error("the test PostgreSQL server did not start:\n" +
                             (log.ok() ? *log : std::string()));
  }
}

PostgresCluster::~PostgresCluster() {
  if (server_) {
    kill(server_->pid(), SIGQUIT);  // immediate shutdown: nothing here is kept
    int status = 0;
    WaitFor([&] { return server_->Exited(&status); }, std::chrono::seconds(10));
    server_.reset();
  }
  std::error_code ec;
  if (!std::getenv("TF_KEEP_TEST_DIRS")) std::filesystem::remove_all(dir_, ec);
}

std::string PostgresCluster::Url(const std::string& database) const {
  return "postgresql://postgres@127.0.0.1:" + std::to_string(port_) + "/" + database;
}

std::string PostgresCluster::CreateDatabase(const std::string& name) {
  auto admin = db::Database::Open(Url("postgres"), false);
  if (!admin.ok()) throw std::runtime_error(admin.status().ToString());
  Status created = (*admin)->Exec("CREATE DATABASE " + name);
  if (!created.ok()) throw std::runtime_error(created.ToString());
  return Url(name);
}

std::string DbKindName(const ::testing::TestParamInfo<DbKind>& info) {
  return info.param == DbKind::kSqlite ? "sqlite" : "postgresql";
}

TestDatabase::TestDatabase(DbKind kind, const std::string& dir) {
  if (kind == DbKind::kSqlite) {
    location_ = dir + "/tunefleet.db";
    return;
  }
  cluster_ = std::make_unique<PostgresCluster>();
  location_ = cluster_->CreateDatabase("tunefleet");
}

CoordinatorProcess::CoordinatorProcess(const std::string& dir, std::vector<std::string> extra_args,
                                       std::string db_path)
    : dir_(dir),
      extra_args_(std::move(extra_args)),
      db_path_(db_path.empty() ? dir + "/tunefleet.db" : std::move(db_path)) {}

void CoordinatorProcess::Start(bool wait) {
  std::string port_file = dir_ + "/coordinator.port";
  std::filesystem::remove(port_file);
  std::vector<std::string> argv = {BinaryPath("bin/tunefleet-coordinator"),
                                   "--listen",
                                   "127.0.0.1:" + std::to_string(port_),
                                   "--db",
                                   db_path(),
                                   "--artifacts",
                                   dir_ + "/artifacts",
                                   "--port-file",
                                   port_file};
  argv.insert(argv.end(), extra_args_.begin(), extra_args_.end());
  WithEnvironment(environment_, argv);
  // Tests talk plaintext over 127.0.0.1 unless they set up TLS themselves,
  // and without tokens unless they set up an admin token themselves.
  if (std::find(argv.begin(), argv.end(), "--tls-cert") == argv.end())
    argv.push_back("--plaintext");
  // (PostgreSQL has no file to keep the admin token beside.)
  if (std::find(argv.begin(), argv.end(), "--admin-token-file") == argv.end()) {
    argv.push_back("--allow-anonymous");
    if (db::Database::IsPostgresUrl(db_path_))
      argv.insert(argv.end(), {"--admin-token-file", dir_ + "/admin.token"});
  }
  process_ = Process::Start(argv, dir_ + "/coordinator." + std::to_string(starts_++) + ".log");
  if (wait && !WaitServing(std::chrono::seconds(30)))
    throw std::runtime_error("coordinator did not start:\n" + process_->Log());
}

bool CoordinatorProcess::WaitServing(std::chrono::milliseconds timeout) {
  const std::string port_file = dir_ + "/coordinator.port";
  if (!WaitFor([&] { return std::filesystem::exists(port_file); }, timeout)) return false;
  port_ = std::stoi(*ReadFile(port_file));
  return true;
}

std::unique_ptr<Process> StartWorker(const std::string& address, const std::string& dir,
                                     const std::string& name, const std::string& devices,
                                     std::vector<std::string> extra_args,
                                     std::vector<std::string> environment) {
  std::vector<std::string> argv = {
      BinaryPath("bin/tunefleet-worker"), "--coordinator", address, "--devices", devices, "--cache",
      dir + "/" + name + "-cache"};
  // A test's fleet shares this host's cores on purpose (its timings mean
  // nothing), and tests run side by side: each worker locks its devices
  // apart from every other one's.
  argv.insert(argv.end(), {"--lock-dir", dir + "/" + name + "-locks"});
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  WithEnvironment(environment, argv);
  return Process::Start(argv, dir + "/" + name + ".log");
}

RunOptions WithTimeout(double timeout_s) {
  RunOptions options;
  options.timeout_s = timeout_s;
  return options;
}

ProcessResult RunCli(const std::string& address, std::vector<std::string> args, double timeout_s) {
  std::vector<std::string> argv = {BinaryPath("bin/tunefleet"), "--coordinator", address};
  argv.insert(argv.end(), args.begin(), args.end());
  auto result = RunProcess(argv, WithTimeout(timeout_s));
  return result.ok() ? *result : ProcessResult{};
}

kernelspec::LoadedSpec LoadTestSpec(const std::string& path,
                                    const std::function<void(tunefleet::v1::KernelSpec&)>& edit) {
  auto loaded = kernelspec::LoadSpecFile(SourcePath(path));
  if (!loaded.ok()) throw std::runtime_error(loaded.status().ToString());
  if (edit) edit(loaded->spec);
  return std::move(*loaded);
}

tunefleet::v1::Job SubmitSpec(client::Client& client, const kernelspec::LoadedSpec& spec,
                              int priority) {
  auto job = client.Submit(spec.spec, spec.sources, priority);
  EXPECT_TRUE(job.ok()) << job.status().ToString();
  return job.ok() ? *job : tunefleet::v1::Job();
}

tunefleet::v1::Job WaitForJobEnd(client::Client& client, int64_t job_id,
                                 std::chrono::milliseconds timeout) {
  namespace v1 = ::tunefleet::v1;
  v1::Job job;
  WaitFor(
      [&] {
        auto got = client.GetJob(job_id);
        if (got.ok()) job = *got;
        return got.ok() &&
               (job.state() == v1::JOB_STATE_SUCCEEDED || job.state() == v1::JOB_STATE_FAILED ||
                job.state() == v1::JOB_STATE_CANCELLED);
      },
      timeout);
  return job;
}

namespace {

// The single integer an SQL query with `job_id` bound to ?1 (if any) returns.
int64_t QueryInt(db::Database& db, const std::string& sql, int64_t job_id = 0) {
  auto stmt = db.Prepare(sql);
  EXPECT_TRUE(stmt.ok()) << stmt.status().ToString();
  if (!stmt.ok()) return -1;
  if (job_id) stmt->Bind(1, job_id);
  auto row = stmt->Step();
  EXPECT_TRUE(row.ok() && *row) << sql;
  return row.ok() && *row ? stmt->Int(0) : -1;
}

}  // namespace

void ExpectExactlyOneResultPerCandidate(const std::string& db_path, int64_t job_id) {
  auto db = db::Database::Open(db_path, false);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  int64_t candidates = QueryInt(**db, "SELECT COUNT(*) FROM candidates WHERE job_id = ?", job_id);
  EXPECT_GT(candidates, 0) << "job " << job_id;
  EXPECT_EQ(QueryInt(**db, "SELECT COUNT(*) FROM results WHERE job_id = ?", job_id), candidates)
      << "job " << job_id;
  EXPECT_EQ(QueryInt(**db,
                     "SELECT COUNT(*) FROM candidates c WHERE job_id = ? AND NOT EXISTS "
                     "(SELECT 1 FROM results r WHERE r.candidate_id = c.id)",
                     job_id),
            0)
      << "job " << job_id;
}

void ExpectFleetInvariants(const std::string& db_path) {
  namespace v1 = ::tunefleet::v1;
  auto db = db::Database::Open(db_path, false);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  if (!db::Database::IsPostgresUrl(db_path)) {
    auto check = (*db)->Prepare("PRAGMA integrity_check");
    ASSERT_TRUE(check.ok());
    ASSERT_TRUE(*check->Step());
    EXPECT_EQ(check->Text(0), "ok");
  }
  auto jobs = (*db)->Prepare(
      "SELECT id, state, candidates_total, candidates_done, candidates_failed FROM jobs");
  ASSERT_TRUE(jobs.ok());
  while (*jobs->Step()) {
    const int64_t id = jobs->Int(0);
    const auto state = static_cast<v1::JobState>(jobs->Int(1));
    EXPECT_TRUE(state == v1::JOB_STATE_SUCCEEDED || state == v1::JOB_STATE_FAILED ||
                state == v1::JOB_STATE_CANCELLED)
        << "job " << id << " is still " << v1::JobState_Name(state);
    if (state == v1::JOB_STATE_CANCELLED) continue;
    if (jobs->Int(2) > 0) ExpectExactlyOneResultPerCandidate(db_path, id);
    EXPECT_EQ(jobs->Int(3), jobs->Int(2)) << "job " << id << ": done vs total";
    EXPECT_EQ(QueryInt(**db, "SELECT COUNT(*) FROM results WHERE job_id = ?", id), jobs->Int(3))
        << "job " << id << ": results vs candidates_done";
    EXPECT_EQ(QueryInt(**db,
                       "SELECT COUNT(*) FROM results WHERE job_id = ? AND status != " +
                           std::to_string(v1::RESULT_STATUS_OK),
                       id),
              jobs->Int(4))
        << "job " << id << ": failed results vs candidates_failed";
  }
}

std::map<int64_t, tunefleet::v1::CandidateResult> RunLease(worker::RunnerSupervisor& supervisor,
                                                           const tunefleet::v1::Lease& lease,
                                                           const std::string& artifact) {
  std::map<int64_t, tunefleet::v1::CandidateResult> results;
  Status status = supervisor.RunLease(
      lease, {artifact},
      [&](tunefleet::v1::CandidateResult r) {
        EXPECT_TRUE(results.emplace(r.candidate_id(), r).second)
            << "two results for candidate " << r.candidate_id();
      },
      [] { return false; });
  EXPECT_TRUE(status.ok()) << status.ToString();
  return results;
}

}  // namespace tf::testing
