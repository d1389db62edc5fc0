// A long-lived C++ client across a coordinator restarted on its port, and a
// watch of a coordinator that stops answering (SIGSTOP): real coordinator
// processes, since a server in the test's own process would drive the
// client's connections itself and hide a client that never polls them.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <thread>

#include "client/client.h"
#include "tests/test_util.h"

namespace tf::testing {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Calls every 100 ms, as an application would, until one is answered; the
// seconds that took.
double SecondsUntilAnswered(client::Client& client) {
  const auto start = Clock::now();
  while (!client.ListJobs(1).ok() && SecondsSince(start) < 60) {
    std::this_thread::sleep_for(milliseconds(100));
  }
  return SecondsSince(start);
}

// gRPC notices a connection attempt's end only while a thread polls the
// channel; a client whose calls fail fast polls none, and before the
// client's poller a restarted coordinator was found by gRPC's 5 s backup
// poller: 5-10 s (up to 17 s with the client's calls) after it served.
TEST(CoordinatorRestartTest, ALongLivedClientReachesARestartedCoordinatorWithinSeconds) {
  TempDir dir;
  CoordinatorProcess coordinator(dir.path());
  coordinator.Start();
  const std::string nothing = "127.0.0.1:" + std::to_string(FreePort());
  for (const std::string& addresses :
       {coordinator.address(), nothing + "," + coordinator.address()}) {
    client::ClientOptions options;
    options.call_timeout_s = 5;
    auto client = client::Client::Connect(addresses, options);
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    ASSERT_LT(SecondsUntilAnswered(**client), 10) << addresses;
    for (int restart = 0; restart < 2; ++restart) {
      coordinator.Kill();
      // Long enough for gRPC's back-off to grow to its most.
      const auto killed = Clock::now();
      while (SecondsSince(killed) < 4) {
        EXPECT_FALSE((*client)->ListJobs(1).ok());
        std::this_thread::sleep_for(milliseconds(100));
      }
      coordinator.Start();
      const double waited = SecondsUntilAnswered(**client);
      std::printf("%s, restart %d: answered %.2f s after the coordinator served\n",
                  addresses.c_str(), restart, waited);
      EXPECT_LT(waited, 3) << addresses << ", restart " << restart;
    }
  }
}

// Keepalive pings find a coordinator that holds the connection but answers
// nothing; before, the watch waited for it without end. The watch is quiet
// for 7 s first, longer than gRPC pings without data by default, and the
// coordinator lets its pings be.
TEST(CoordinatorRestartTest, AWatchOfAFrozenCoordinatorFailsAfterItsReconnectTime) {
  TempDir dir;
  CoordinatorProcess coordinator(dir.path());
  coordinator.Start();
  client::ClientOptions options;
  options.watch_reconnect_s = 8;
  auto client = client::Client::Connect(coordinator.address(), options);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  // No worker: the job stays queued.
  const int64_t job_id =
      SubmitSpec(**client, LoadTestSpec("tests/integration/data/slow/slow.yaml")).job_id();
  ASSERT_NE(job_id, 0);
  std::atomic<bool> watching = false;
  std::atomic<bool> frozen = false;
  Clock::time_point stopped;
  std::thread freezer([&] {
    WaitFor([&] { return watching.load(); }, seconds(30));
    std::this_thread::sleep_for(seconds(7));
    stopped = Clock::now();
    kill(coordinator.pid(), SIGSTOP);
    frozen = true;
  });
  std::vector<std::string> lost_while_answering;
  Result<tunefleet::v1::Job> watched = (*client)->WatchJob(
      job_id, [&](const tunefleet::v1::Job&) { watching = true; },
      [&](const Status& lost) {
        if (!frozen) lost_while_answering.push_back(lost.message());
      });
  freezer.join();
  const double waited = SecondsSince(stopped);
  kill(coordinator.pid(), SIGCONT);
  std::printf("the watch failed %.2f s after the coordinator stopped\n", waited);
  EXPECT_TRUE(lost_while_answering.empty()) << lost_while_answering[0];
  EXPECT_EQ(watched.status().code(), Code::kUnavailable) << watched.status().ToString();
  EXPECT_NE(watched.status().message().find("did not answer the watch of job " +
                                            std::to_string(job_id) + " for 8 s"),
            std::string::npos)
      << watched.status().ToString();
  // Keepalive's 5 s at most, then the 8 s to reconnect.
  EXPECT_LT(waited, 8 + 5 + 3);
}

}  // namespace
}  // namespace tf::testing
