// Several coordinator addresses (a coordinator and its standbys), with a real
// coordinator process at one and nothing at the other: the C++ client, the
// CLI and a worker reach the one that serves wherever it stands in the list.
// (A server in the test's own process would drive the client's connections
// itself and hide a client that never polls them, so it is a real process.)
// Following a takeover is standby_test's.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include "client/client.h"
#include "tests/test_util.h"

namespace tf::testing {
namespace {

using std::chrono::seconds;

TEST(CoordinatorAddressesTest, ClientCliAndWorkerReachTheOneThatServesWhereverItIsListed) {
  TempDir dir;
  CoordinatorProcess coordinator(dir.path());
  coordinator.Start();
  const std::string nothing = "127.0.0.1:" + std::to_string(FreePort());
  // Blanks around an address are no part of it (" 127.0.0.1" was looked up
  // as a host name, and failed).
  const std::vector<std::string> lists = {nothing + "," + coordinator.address(),
                                          coordinator.address() + "," + nothing,
                                          nothing + ", " + coordinator.address() + " "};
  for (const std::string& addresses : lists) {
    auto client = client::Client::Connect(addresses);
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    auto jobs = (*client)->ListJobs(0);
    EXPECT_TRUE(jobs.ok()) << addresses << ": " << jobs.status().ToString();
    auto cli = RunCli(addresses, {"jobs"});
    EXPECT_EQ(cli.exit_code, 0) << addresses << ": " << cli.output;
  }

  auto worker = StartWorker(lists[0], dir.path(), "worker0", "cpu:1");
  auto client = client::Client::Connect(coordinator.address());
  ASSERT_TRUE(client.ok());
  EXPECT_TRUE(WaitFor(
      [&] {
        auto workers = (*client)->ListWorkers();
        return workers.ok() && workers->size() == 1;
      },
      seconds(60)))
      << worker->Log();
}

// Stopped while no coordinator answers, as `systemctl stop` does while the
// coordinator is down: a clean stop (exit 0), which systemd does not count as
// a failure.
TEST(CoordinatorAddressesTest, AWorkerStoppedBeforeAnyCoordinatorAnswersExitsZero) {
  TempDir dir;
  const std::string nothing = "127.0.0.1:" + std::to_string(FreePort());
  auto worker = StartWorker(nothing, dir.path(), "worker0", "cpu:1");
  ASSERT_TRUE(
      WaitFor([&] { return worker->Log().find("device 0:") != std::string::npos; }, seconds(30)))
      << worker->Log();
  kill(worker->pid(), SIGTERM);
  int wait_status = 0;
  ASSERT_TRUE(WaitFor([&] { return worker->Exited(&wait_status); }, seconds(30))) << worker->Log();
  ASSERT_TRUE(WIFEXITED(wait_status)) << worker->Log();
  EXPECT_EQ(WEXITSTATUS(wait_status), 0) << worker->Log();
  EXPECT_NE(worker->Log().find("shut down before registering"), std::string::npos) << worker->Log();
}

}  // namespace
}  // namespace tf::testing
