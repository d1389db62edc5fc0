// A standby coordinator: two real coordinator processes on one real
// PostgreSQL database. The second stands by (an advisory lock) until the
// first one's connection ends; workers and clients are given both addresses
// and follow whichever serves.
#include <gtest/gtest.h>

#include <filesystem>

#include "client/client.h"
#include "tests/test_util.h"

namespace tf::testing {
namespace {

namespace v1 = ::tunefleet::v1;
using std::chrono::seconds;

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

}  // namespace
}  // namespace tf::testing
