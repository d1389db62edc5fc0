// What the programs do with the addresses and flags they are given: a port
// another process listens on is refused, not shared (gRPC and httplib set
// SO_REUSEPORT by default, with which a second coordinator would answer part
// of the first one's connections from its own database), and a bad flag exits
// 2, which the systemd units do not restart on (deploy/systemd).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>

#include "common/files.h"
#include "tests/test_util.h"

namespace tf::testing {
namespace {

class ListenTest : public ::testing::Test {
 protected:
  // A coordinator serving gRPC, health and the dashboard on 127.0.0.1.
  void SetUp() override { first_.Start(); }

  // A second coordinator, on its own database, with `args`; what it printed
  // and its exit code.
  ProcessResult Second(std::vector<std::string> args) {
    std::vector<std::string> argv = {BinaryPath("bin/tunefleet-coordinator"),
                                     "--plaintext",
                                     "--allow-anonymous",
                                     "--db",
                                     dir_ / "second.db",
                                     "--artifacts",
                                     dir_ / "artifacts2"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto result = RunProcess(argv, WithTimeout(30));
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    return result.ok() ? *result : ProcessResult();
  }

  TempDir dir_;
  CoordinatorProcess first_{
      dir_.path(),
      {"--health-listen", "127.0.0.1:0", "--health-port-file", dir_ / "health.port", "--http",
       "127.0.0.1:0", "--http-port-file", dir_ / "http.port"}};
};

TEST_F(ListenTest, ASecondCoordinatorOnAPortInUseDoesNotStart) {
  const std::string port = std::to_string(first_.port());
  ProcessResult result = Second({"--listen", "127.0.0.1:" + port});
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find("cannot listen on 127.0.0.1:" + port), std::string::npos)
      << result.output;
}

// A second coordinator started by mistake on the first one's port: it wrote
// a fresh admin token file, and a token into its database, before it found
// the port taken.
TEST_F(ListenTest, ASecondCoordinatorOnAPortInUseLeavesNoAdminTokenBehind) {
  const std::string listen = "127.0.0.1:" + std::to_string(first_.port());
  const std::string first_token = first_.db_path() + ".admin-token";
  const Result<std::string> before = ReadFile(first_token);
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  EXPECT_EQ(Second({"--listen", listen}).exit_code, 1);
  EXPECT_EQ(Second({"--listen", listen, "--admin-token-file", first_token}).exit_code, 1);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "second.db.admin-token"));
  EXPECT_EQ(*ReadFile(first_token), *before);

  // Started where it can listen, its database holds only the admin token it
  // writes now.
  std::filesystem::create_directory(dir_ / "again");
  CoordinatorProcess again(dir_ / "again", {}, dir_ / "second.db");
  again.Start();
  ProcessResult tokens = RunCli(
      again.address(), {"--token-file", dir_ / "second.db.admin-token", "token", "list", "--json"});
  EXPECT_EQ(tokens.exit_code, 0) << tokens.output;
  EXPECT_EQ(tokens.output.find("\"token_id\": 2"), std::string::npos) << tokens.output;
  EXPECT_NE(tokens.output.find("\"token_id\": 1"), std::string::npos) << tokens.output;
}

TEST_F(ListenTest, AHealthPortInUseIsRefused) {
  const std::string port = ReadPortFile(dir_ / "health.port");
  ProcessResult result =
      Second({"--listen", "127.0.0.1:0", "--health-listen", "127.0.0.1:" + port});
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find("cannot listen on 127.0.0.1:" + port), std::string::npos)
      << result.output;
}

TEST_F(ListenTest, ADashboardPortInUseIsRefused) {
  const std::string port = ReadPortFile(dir_ / "http.port");
  ProcessResult result = Second({"--listen", "127.0.0.1:0", "--http", "127.0.0.1:" + port});
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find("the dashboard cannot listen on 127.0.0.1:" + port),
            std::string::npos)
      << result.output;
}

// While the coordinator's accept loop is held up (here: the process stopped), the kernel keeps
// a burst of dashboard connections waiting; with httplib's backlog of 5 it dropped all but 6,
// which a client that waits to be spoken to before it sends may never notice.
TEST_F(ListenTest, TheDashboardKeepsABurstOfConnectionsWaitingWhileItIsBusy) {
  const int port = std::stoi(ReadPortFile(dir_ / "http.port"));
  ASSERT_EQ(kill(first_.pid(), SIGSTOP), 0);
  constexpr int kBurst = 32;
  std::vector<pollfd> sockets;
  for (int i = 0; i < kBurst; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    ASSERT_GE(fd, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);  // EINPROGRESS
    sockets.push_back({fd, POLLOUT, 0});
  }
  // A handshake on loopback takes microseconds; one dropped is retried after 1 s.
  int connected = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(700);
  while (connected < kBurst && std::chrono::steady_clock::now() < deadline) {
    poll(sockets.data(), sockets.size(), 50);
    connected = 0;
    for (pollfd& s : sockets) {
      int error = -1;
      socklen_t size = sizeof error;
      connected += (s.revents & POLLOUT) &&
                   getsockopt(s.fd, SOL_SOCKET, SO_ERROR, &error, &size) == 0 && error == 0;
    }
  }
  kill(first_.pid(), SIGCONT);
  for (pollfd& s : sockets) close(s.fd);
  EXPECT_EQ(connected, kBurst);
}

TEST_F(ListenTest, AnAddressWithoutAPortOrOverTheRangeIsABadFlagAndStartsNothing) {
  // gRPC alone would serve 127.0.0.1:99999 on port 34463, and 127.0.0.1 on 443.
  for (const std::string flag : {"--listen", "--health-listen", "--http"}) {
    // Should the check be missing, the gRPC port is not the default 50051.
    const std::string listen = flag == "--listen" ? "--health-listen" : "--listen";
    ProcessResult result = Second({listen, "127.0.0.1:0", flag, "127.0.0.1:99999"});
    EXPECT_EQ(result.exit_code, 2) << flag << ": " << result.output;
    EXPECT_NE(result.output.find("'127.0.0.1:99999': port 99999 is out of range (0-65535)"),
              std::string::npos)
        << flag << ": " << result.output;
    result = Second({listen, "127.0.0.1:0", flag, "127.0.0.1"});
    EXPECT_EQ(result.exit_code, 2) << flag << ": " << result.output;
    EXPECT_NE(result.output.find("'127.0.0.1': expected HOST:PORT"), std::string::npos)
        << flag << ": " << result.output;
  }
  EXPECT_FALSE(std::filesystem::exists(dir_ / "second.db"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "second.db.admin-token"));
}

TEST(BadFlagTest, CoordinatorAndWorkerExit2AndStartNothing) {
  TempDir dir;
  for (std::vector<std::string> argv :
       {std::vector<std::string>{BinaryPath("bin/tunefleet-coordinator"), "--db", dir / "c.db",
                                 "--artifacts", dir / "artifacts"},
        std::vector<std::string>{BinaryPath("bin/tunefleet-worker"), "--coordinator", "127.0.0.1:1",
                                 "--cache", dir / "cache"}}) {
    argv.push_back("--no-such-flag");
    auto unknown = RunProcess(argv, WithTimeout(30));
    ASSERT_TRUE(unknown.ok()) << unknown.status().ToString();
    EXPECT_EQ(unknown->exit_code, 2) << argv[0] << ": " << unknown->output;
    EXPECT_NE(unknown->output.find("--no-such-flag"), std::string::npos) << unknown->output;
  }
  auto worker = RunProcess({BinaryPath("bin/tunefleet-worker"), "--coordinator", "127.0.0.1:99999",
                            "--cache", dir / "cache"},
                           WithTimeout(30));
  ASSERT_TRUE(worker.ok()) << worker.status().ToString();
  EXPECT_EQ(worker->exit_code, 2) << worker->output;
  EXPECT_NE(worker->output.find("port 99999 is out of range"), std::string::npos) << worker->output;
  auto missing =
      RunProcess({BinaryPath("bin/tunefleet-coordinator"), "--db", dir / "c.db"}, WithTimeout(30));
  ASSERT_TRUE(missing.ok()) << missing.status().ToString();
  EXPECT_EQ(missing->exit_code, 2) << missing->output;
  EXPECT_NE(missing->output.find("--artifacts is required"), std::string::npos) << missing->output;
  EXPECT_FALSE(std::filesystem::exists(dir / "c.db"));
}

TEST(BadFlagTest, CoordinatorNumbersAndTlsFlagsAreCheckedBeforeAnythingStarts) {
  // Each of these started a coordinator that could not work: a lease TTL of 0 had every
  // worker re-register each second, a batch size of 0 failed every build.
  TempDir dir;
  const std::vector<std::string> base = {BinaryPath("bin/tunefleet-coordinator"),
                                         "--db",
                                         dir / "c.db",
                                         "--artifacts",
                                         dir / "artifacts",
                                         "--listen",
                                         "127.0.0.1:0"};
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--plaintext", "--lease-ttl-ms", "0"}, "--lease-ttl-ms: 0 is not above 0"},
      {{"--plaintext", "--heartbeat-ms", "-5"}, "--heartbeat-ms: -5 is not above 0"},
      {{"--plaintext", "--batch-size", "0"}, "--batch-size: 0 is not above 0"},
      {{"--plaintext", "--build-jobs", "-1"}, "--build-jobs: -1 is negative"},
      {{"--plaintext", "--max-jobs-in-flight", "-1"}, "--max-jobs-in-flight: -1 is negative"},
      {{"--plaintext", "--max-source-bytes", "0"}, "--max-source-bytes: 0 is not above 0"},
      {{"--plaintext", "--heartbeat-ms", "2000", "--lease-ttl-ms", "2000"},
       "--heartbeat-ms 2000 must be shorter than --lease-ttl-ms 2000"},
      {{"--plaintext", "--tls-cert", dir / "server.pem", "--tls-key", dir / "server.key"},
       "--plaintext serves without TLS"},
      {{"--tls-cert", dir / "server.pem"}, "--tls-cert and --tls-key go together"},
      // Each of these was accepted and did not do what it says: no mutual TLS,
      // and a port file a script waits for forever.
      {{"--plaintext", "--tls-client-ca", dir / "ca.pem"}, "--tls-client-ca excludes --plaintext"},
      {{"--plaintext", "--http-port-file", dir / "http.port"}, "--http-port-file requires --http"},
      {{"--plaintext", "--health-port-file", dir / "health.port"},
       "--health-port-file requires --health-listen"},
      {{}, "pass --tls-cert and --tls-key to serve over TLS, or --plaintext"},
  };
  for (const auto& [flags, message] : cases) {
    std::vector<std::string> argv = base;
    argv.insert(argv.end(), flags.begin(), flags.end());
    auto result = RunProcess(argv, WithTimeout(30));
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    EXPECT_EQ(result->exit_code, 2) << message << ": " << result->output;
    EXPECT_NE(result->output.find(message), std::string::npos) << result->output;
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "c.db"));
}

}  // namespace
}  // namespace tf::testing
