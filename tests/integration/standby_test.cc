// A standby coordinator: two real coordinator processes on one real
// PostgreSQL database. The second stands by (an advisory lock) until the
// first one's connection ends; workers and clients are given both addresses
// and follow whichever serves, and its --http port answers all along.
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "auth/token_file.h"
#include "client/client.h"
#include "tests/test_util.h"

namespace tf::testing {
namespace {

namespace v1 = ::tunefleet::v1;
using std::chrono::seconds;

struct HttpAnswer {
  int status = 0;  // 0: none (refused, or no answer within 5 s)
  std::string body;
};

// GET http://127.0.0.1:`port``path`, with `token` as the bearer when given.
HttpAnswer Get(int port, const std::string& path, const std::string& token = "") {
  httplib::Client http("127.0.0.1", port);
  http.set_connection_timeout(2);
  http.set_read_timeout(5);
  httplib::Headers headers;
  if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
  auto answer = http.Get(path.c_str(), headers);
  if (!answer) return {0, httplib::to_string(answer.error())};
  return {answer->status, answer->body};
}

TEST(StandbyTest, StandbyTakesOverWhenTheActiveCoordinatorIsKilledMidJob) {
  TempDir dir;
  PostgresCluster cluster;
  const std::string url = cluster.CreateDatabase("tunefleet");
  // Each coordinator on a host of its own, as far as files go: its own
  // artifacts (the standby rebuilds what it lacks) and admin token.
  const std::vector<std::string> args = {"--lease-ttl-ms", "1500", "--heartbeat-ms", "300"};
  std::filesystem::create_directories(dir / "a");
  std::filesystem::create_directories(dir / "b");
  CoordinatorProcess active(dir / "a", args, url);
  CoordinatorProcess standby(dir / "b", args, url);
  active.set_port(FreePort());
  standby.set_port(FreePort());
  active.Start();
  standby.Start(/*wait=*/false);
  ASSERT_TRUE(
      WaitFor([&] { return standby.Log().find("standing by") != std::string::npos; }, seconds(30)))
      << standby.Log();

  const std::string both = active.address() + "," + standby.address();
  auto client = client::Client::Connect(both);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  auto worker = StartWorker(both, dir.path(), "worker0", "cpu:1");
  v1::Job job = SubmitSpec(**client, LoadTestSpec("tests/integration/data/slow/slow.yaml"));
  ASSERT_GT(job.job_id(), 0);
  ASSERT_TRUE(WaitFor(
      [&] {
        auto now = (*client)->GetJob(job.job_id());
        return now.ok() && now->candidates_done() >= 3;
      },
      seconds(120)))
      << active.Log() << worker->Log();
  EXPECT_FALSE(standby.WaitServing(std::chrono::milliseconds(0))) << "two coordinators served";

  active.Kill();  // SIGKILL, mid-job
  const auto killed = std::chrono::steady_clock::now();
  ASSERT_TRUE(standby.WaitServing(seconds(30))) << standby.Log();
  const double takeover_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
  std::cout << "the standby served " << takeover_s << " s after the active coordinator's SIGKILL\n";
  RecordProperty("takeover_s", std::to_string(takeover_s));
  EXPECT_LT(takeover_s, 5.0) << standby.Log();

  // The client and the worker follow it; so does the CLI given both.
  v1::Job done = WaitForJobEnd(**client, job.job_id(), seconds(180));
  EXPECT_EQ(done.state(), v1::JOB_STATE_SUCCEEDED) << done.DebugString() << standby.Log();
  EXPECT_EQ(done.candidates_done(), done.candidates_total());
  EXPECT_EQ(done.candidates_failed(), 0);
  auto status = RunCli(both, {"status", std::to_string(job.job_id()), "--json"});
  EXPECT_EQ(status.exit_code, 0) << status.output;
  EXPECT_NE(status.output.find("succeeded"), std::string::npos) << status.output;
  ExpectExactlyOneResultPerCandidate(url, job.job_id());
  ExpectFleetInvariants(url);
}

// While it waits, a standby answers its --http port, so that a scrape or a
// probe tells it from a dead process: /healthz ok, /metrics
// tunefleet_standby 1 (no token: it has read none), every other page 503.
// On takeover the same port is the dashboard's, and no scrape across it goes
// unanswered.
TEST(StandbyTest, AStandbyAnswersItsHttpPortAndHandsItToTheDashboardOnTakeover) {
  TempDir dir;
  PostgresCluster cluster;
  const std::string url = cluster.CreateDatabase("tunefleet");
  std::filesystem::create_directories(dir / "a");
  std::filesystem::create_directories(dir / "b");
  // Tokens required (an --admin-token-file and no --allow-anonymous).
  auto args = [&](const std::string& host) -> std::vector<std::string> {
    return {"--admin-token-file", dir / (host + "/admin.token"), "--http", "127.0.0.1:0",
            "--http-port-file",   dir / (host + "/http.port")};
  };
  CoordinatorProcess active(dir / "a", args("a"), url);
  CoordinatorProcess standby(dir / "b", args("b"), url);
  active.Start();
  // The standby keeps the active one's admin token valid when it takes over.
  std::filesystem::copy_file(dir / "a/admin.token", dir / "b/admin.token");
  const std::string token = *auth::ReadTokenFile(dir / "a/admin.token");
  standby.Start(/*wait=*/false);
  ASSERT_TRUE(WaitFor([&] { return !ReadPortFile(dir / "b/http.port").empty(); }, seconds(30)))
      << standby.Log();
  const int port = std::stoi(ReadPortFile(dir / "b/http.port"));
  const std::string standing_by = "standby: waiting for the active coordinator's database lock";

  HttpAnswer metrics = Get(port, "/metrics");
  EXPECT_EQ(metrics.status, 200) << metrics.body;
  EXPECT_NE(metrics.body.find("\ntunefleet_standby 1\n"), std::string::npos) << metrics.body;
  EXPECT_EQ(metrics.body.find("tunefleet_jobs"), std::string::npos) << metrics.body;
  HttpAnswer health = Get(port, "/healthz");
  EXPECT_EQ(health.status, 200) << health.body;
  EXPECT_EQ(health.body, "ok\n");
  for (const char* page : {"/", "/readyz", "/api/jobs", "/no-such-page"}) {
    HttpAnswer answer = Get(port, page, token);
    EXPECT_EQ(answer.status, 503) << page << ": " << answer.body;
    EXPECT_NE(answer.body.find(standing_by), std::string::npos) << page << ": " << answer.body;
  }
  const int active_port = std::stoi(ReadPortFile(dir / "a/http.port"));
  HttpAnswer active_metrics = Get(active_port, "/metrics", token);
  EXPECT_EQ(active_metrics.status, 200) << active_metrics.body;
  EXPECT_NE(active_metrics.body.find("\ntunefleet_standby 0\n"), std::string::npos)
      << active_metrics.body;

  // Scraped every 20 ms across the takeover, as Prometheus would with its token.
  std::atomic<bool> done{false};
  std::atomic<int> scraped{0};
  std::vector<HttpAnswer> scrapes;
  std::thread scraper([&] {
    while (!done) {
      scrapes.push_back(Get(port, "/metrics", token));
      ++scraped;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  WaitFor([&] { return scraped > 0; }, seconds(10));  // one before the kill
  active.Kill();
  const bool served = standby.WaitServing(seconds(30));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  done = true;
  scraper.join();
  ASSERT_TRUE(served) << standby.Log();
  ASSERT_FALSE(scrapes.empty());
  for (const HttpAnswer& scrape : scrapes) ASSERT_EQ(scrape.status, 200) << scrape.body;
  EXPECT_NE(scrapes.front().body.find("\ntunefleet_standby 1\n"), std::string::npos)
      << scrapes.front().body;
  EXPECT_NE(scrapes.back().body.find("\ntunefleet_standby 0\n"), std::string::npos)
      << scrapes.back().body;

  // The dashboard, on the same port, with the database's tokens.
  EXPECT_EQ(ReadPortFile(dir / "b/http.port"), std::to_string(port));
  metrics = Get(port, "/metrics", token);
  EXPECT_EQ(metrics.status, 200) << metrics.body;
  EXPECT_NE(metrics.body.find("\ntunefleet_standby 0\n"), std::string::npos) << metrics.body;
  EXPECT_NE(metrics.body.find("tunefleet_jobs{"), std::string::npos) << metrics.body;
  EXPECT_EQ(Get(port, "/metrics").status, 401);
  EXPECT_EQ(Get(port, "/readyz").status, 200);
  HttpAnswer page = Get(port, "/");
  EXPECT_EQ(page.status, 200) << page.body;
  EXPECT_EQ(page.body.find(standing_by), std::string::npos);
}

}  // namespace
}  // namespace tf::testing
