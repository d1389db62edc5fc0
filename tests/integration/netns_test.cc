// Several hosts on one machine: the coordinator and the workers each in a
// network namespace of their own, joined by veth links, as on a real
// network. Needs root and `ip` (CI runs as root); skips otherwise.
//
//   coordinator ns  10.77.1.1 ---- 10.77.1.2  ns "a": a worker labelled alpha
//                   10.77.2.1 ---- 10.77.2.2  ns "b": a worker labelled beta,
//                                             and a second alpha worker
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "common/files.h"
#include "db/database.h"
#include "tests/test_util.h"

namespace tf::testing {
namespace {

namespace v1 = ::tunefleet::v1;
using std::chrono::seconds;

constexpr const char* kIp = "/usr/sbin/ip";

// Runs `ip ARGS...`; false (and a test failure naming it) when it fails.
bool Ip(std::vector<std::string> args) {
  args.insert(args.begin(), kIp);
  auto result = RunProcess(args, WithTimeout(30));
  bool ok = result.ok() && result->exit_code == 0;
  EXPECT_TRUE(ok) << "ip failed: " << result->output;
  return ok;
}

// The namespaces and links of one test run, with names unique to it; all
// removed on destruction, whatever happened.
class Network {
 public:
  Network() : prefix_("tf" + std::to_string(getpid()) + "-") {}
  ~Network() {
    for (const auto& ns : namespaces_) {
      RunProcess({kIp, "netns", "del", ns}, WithTimeout(30));
    }
  }

  std::string AddNamespace(const std::string& name) {
    std::string ns = prefix_ + name;
    if (Ip({"netns", "add", ns})) namespaces_.push_back(ns);
    Ip({"-n", ns, "link", "set", "lo", "up"});
    return ns;
  }

  // A veth pair between two namespaces, `a_ip` and `b_ip` being /24
  // addresses; `b` routes everything through the link.
  void Link(const std::string& a, const std::string& a_dev, const std::string& a_ip,
            const std::string& b, const std::string& b_dev, const std::string& b_ip) {
    Ip({"link", "add", a_dev, "netns", a, "type", "veth", "peer", "name", b_dev, "netns", b});
    Ip({"-n", a, "addr", "add", a_ip + "/24", "dev", a_dev});
    Ip({"-n", b, "addr", "add", b_ip + "/24", "dev", b_dev});
    Ip({"-n", a, "link", "set", a_dev, "up"});
    Ip({"-n", b, "link", "set", b_dev, "up"});
    Ip({"-n", b, "route", "add", "default", "via", a_ip});
  }

  void SetLink(const std::string& ns, const std::string& dev, bool up) {
    Ip({"-n", ns, "link", "set", dev, up ? "up" : "down"});
  }

  // argv run inside `ns`.
  static std::vector<std::string> In(const std::string& ns, std::vector<std::string> argv) {
    argv.insert(argv.begin(), {kIp, "netns", "exec", ns});
    return argv;
  }

 private:
  std::string prefix_;
  std::vector<std::string> namespaces_;
};

class NetnsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root to make network namespaces (CI runs as root)";
    if (access(kIp, X_OK) != 0) {
      GTEST_SKIP() << kIp << " is missing: install iproute2 (scripts/install-deps.sh does)";
    }
    net_ = std::make_unique<Network>();
    coordinator_ns_ = net_->AddNamespace("coord");
    a_ns_ = net_->AddNamespace("a");
    b_ns_ = net_->AddNamespace("b");
    net_->Link(coordinator_ns_, "to-a", "10.77.1.1", a_ns_, "up0", "10.77.1.2");
    net_->Link(coordinator_ns_, "to-b", "10.77.2.1", b_ns_, "up0", "10.77.2.2");
    ASSERT_FALSE(HasFailure());

    const std::string port_file = dir_ / "coordinator.port";
    coordinator_ = Process::Start(
        Network::In(coordinator_ns_,
                    {BinaryPath("bin/tunefleet-coordinator"), "--plaintext", "--allow-anonymous",
                     "--listen", "10.77.1.1:0", "--db", db_path(), "--artifacts",
                     dir_ / "artifacts", "--port-file", port_file, "--lease-ttl-ms", "2000",
                     "--heartbeat-ms", "300", "--db-sync", "normal"}),
        dir_ / "coordinator.log");
    ASSERT_TRUE(WaitFor([&] { return std::filesystem::exists(port_file); }, seconds(30)))
        << coordinator_->Log();
    address_ = "10.77.1.1:" + std::to_string(std::stoi(*ReadFile(port_file)));
  }

  void TearDown() override {
    if (HasFailure()) {
      if (coordinator_) std::cerr << "coordinator log:\n" << coordinator_->Log() << "\n";
      for (auto& [name, w] : workers_) std::cerr << name << " log:\n" << w->Log() << "\n";
    }
    workers_.clear();
    coordinator_.reset();
    net_.reset();
  }

  std::string db_path() const { return dir_ / "tunefleet.db"; }

  Process& StartWorkerIn(const std::string& ns, const std::string& name, const std::string& label) {
    auto& w = workers_[name];
    w = Process::Start(
        Network::In(ns, {BinaryPath("bin/tunefleet-worker"), "--coordinator", address_, "--devices",
                         "cpu:1", "--cache", dir_ / (name + "-cache"), "--label", label,
                         "--max-candidates", "4", "--lock-dir", dir_ / (name + "-locks")}),
        dir_ / (name + ".log"));
    return *w;
  }

  // The CLI, run where a user of the coordinator would be: in its namespace.
  nlohmann::json Cli(std::vector<std::string> args) {
    args.insert(args.begin(), {BinaryPath("bin/tunefleet"), "--coordinator", address_});
    auto result = RunProcess(Network::In(coordinator_ns_, args), WithTimeout(60));
    EXPECT_TRUE(result.ok() && result->exit_code == 0) << result->output;
    return nlohmann::json::parse(result.ok() ? result->output : "", nullptr, false);
  }

  // Submits the slow test kernel for `label`'s workers, each candidate
  // taking at least `min_time_ms`, through the CLI.
  int64_t SubmitFor(const std::string& label, int min_time_ms) {
    const std::string source = SourcePath("tests/integration/data/slow/");
    const std::string dir = dir_ / ("spec-" + label);
    std::filesystem::create_directories(dir);
    std::filesystem::copy_file(source + "slow.cpp", dir + "/slow.cpp");
    std::string yaml = *ReadFile(source + "slow.yaml");
    auto replace = [&](const std::string& from, const std::string& to) {
      auto at = yaml.find(from);
      ASSERT_NE(at, std::string::npos) << from;
      yaml.replace(at, from.size(), to);
    };
    replace("target: {vendor: cpu}", "target: {vendor: cpu, label: " + label + "}");
    replace("min_time_ms: 1,", "min_time_ms: " + std::to_string(min_time_ms) + ",");
    replace("max_repeats: 3,", "max_repeats: 1000000,");
    EXPECT_TRUE(WriteFileAtomic(dir + "/slow.yaml", yaml).ok());
    auto job = Cli({"submit", dir + "/slow.yaml", "--json"});
    return job.is_object() ? job["job_id"].get<int64_t>() : 0;
  }

  nlohmann::json WaitForEnd(int64_t job_id, seconds timeout) {
    nlohmann::json job;
    WaitFor(
        [&] {
          job = Cli({"status", std::to_string(job_id), "--json"});
          return job.is_object() && job["state"] != "queued" && job["state"] != "running";
        },
        timeout);
    return job;
  }

  // Worker id -> label, from `tunefleet workers`.
  std::map<std::string, std::string> WorkerLabels() {
    std::map<std::string, std::string> labels;
    auto workers = Cli({"workers", "--json"});
    for (const auto& w : workers) {
      for (const auto& d : w["devices"]) {
        for (const auto& l : d["labels"]) labels[w["worker_id"]] = l;
      }
    }
    return labels;
  }

  // Distinct workers that recorded the job's results.
  std::set<std::string> ResultWorkers(int64_t job_id) {
    std::set<std::string> workers;
    auto db = db::Database::Open(db_path(), false);
    EXPECT_TRUE(db.ok());
    auto stmt = (*db)->Prepare("SELECT DISTINCT worker FROM results WHERE job_id = ?");
    stmt->Bind(1, job_id);
    while (*stmt->Step()) workers.insert(stmt->Text(0));
    return workers;
  }

  TempDir dir_;
  std::unique_ptr<Network> net_;
  std::string coordinator_ns_, a_ns_, b_ns_;
  std::unique_ptr<Process> coordinator_;
  std::string address_;
  std::map<std::string, std::unique_ptr<Process>> workers_;
};

TEST_F(NetnsTest, JobsRunOnlyOnWorkersWithTheirLabel) {
  StartWorkerIn(a_ns_, "alpha", "alpha");
  StartWorkerIn(b_ns_, "beta", "beta");
  int64_t alpha_job = SubmitFor("alpha", 20);
  int64_t beta_job = SubmitFor("beta", 20);
  ASSERT_GT(alpha_job, 0);
  ASSERT_GT(beta_job, 0);
  for (int64_t job : {alpha_job, beta_job}) {
    auto done = WaitForEnd(job, seconds(180));
    EXPECT_EQ(done["state"], "succeeded") << done.dump();
    EXPECT_EQ(done["candidates_failed"], 0);
    ExpectExactlyOneResultPerCandidate(db_path(), job);
  }
  auto labels = WorkerLabels();
  ASSERT_EQ(labels.size(), 2u);
  for (auto [job, label] : {std::pair{alpha_job, "alpha"}, std::pair{beta_job, "beta"}}) {
    for (const auto& worker : ResultWorkers(job)) {
      EXPECT_EQ(labels[worker], label) << "job " << job << " ran on " << worker;
    }
  }
  ExpectFleetInvariants(db_path());
}

TEST_F(NetnsTest, LinkCutLongerThanTheLeaseTtlReassignsAndCountsOnce) {
  Process& cut = StartWorkerIn(a_ns_, "alpha-a", "alpha");
  int64_t job = SubmitFor("alpha", 250);  // 24 candidates of 0.25 s, leases of 4
  ASSERT_GT(job, 0);
  ASSERT_TRUE(WaitFor(
      [&] {
        auto workers = Cli({"workers", "--json"});
        return workers.size() == 1 && workers[0]["active_leases"].get<int64_t>() > 0;
      },
      seconds(120)));
  // Cut in the middle of its lease, for twice the lease TTL; meanwhile a
  // second alpha worker, on the other link, takes the expired lease.
  net_->SetLink(coordinator_ns_, "to-a", false);
  StartWorkerIn(b_ns_, "alpha-b", "alpha");
  ASSERT_TRUE(WaitFor([&] { return coordinator_->Log().find("expired") != std::string::npos; },
                      seconds(30)));
  std::this_thread::sleep_for(seconds(2));
  net_->SetLink(coordinator_ns_, "to-a", true);

  auto done = WaitForEnd(job, seconds(180));
  EXPECT_EQ(done["state"], "succeeded") << done.dump();
  EXPECT_EQ(done["candidates_failed"], 0);
  EXPECT_EQ(done["candidates_done"], done["candidates_total"]);
  ExpectExactlyOneResultPerCandidate(db_path(), job);
  // The cut worker came back and registered again under its id.
  ASSERT_TRUE(WaitFor([&] { return cut.Log().find("registering again") != std::string::npos; },
                      seconds(30)))
      << cut.Log();
  ExpectFleetInvariants(db_path());
}

}  // namespace
}  // namespace tf::testing
