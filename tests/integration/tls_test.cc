// TLS between the coordinator and its clients and workers: real processes
// over 127.0.0.1 with certificates made by the openssl command at test time.
#include <gtest/gtest.h>
#include <httplib.h>

#include <filesystem>
#include <thread>

#include "common/files.h"
#include "common/subprocess.h"
#include "tests/test_util.h"

namespace tf::testing {
namespace {

class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Two CAs; the coordinator's certificate and a client's from the first,
    // a client certificate from the second.
    MakeCa("ca");
    MakeCa("other-ca");
    Issue("ca", "server", "subjectAltName=IP:127.0.0.1,DNS:localhost");
    Issue("ca", "client", "extendedKeyUsage=clientAuth");
    Issue("other-ca", "stranger", "extendedKeyUsage=clientAuth");
  }

  void OpenSsl(std::vector<std::string> args) {
    args.insert(args.begin(), "openssl");
    RunOptions options;
    options.cwd = dir_.path();
    options.timeout_s = 60;
    auto run = RunProcess(args, options);
    ASSERT_TRUE(run.ok() && run->success()) << (run.ok() ? run->output : run.status().message());
  }
  void MakeCa(const std::string& name) {
    OpenSsl({"req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-days", "1", "-subj", "/CN=" + name, "-keyout", name + ".key", "-out",
             name + ".pem"});
  }
  void Issue(const std::string& ca, const std::string& name, const std::string& extension) {
    ASSERT_TRUE(WriteFileAtomic(dir_ / (name + ".ext"), extension + "\n").ok());
    OpenSsl({"req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj",
             "/CN=" + name, "-keyout", name + ".key", "-out", name + ".csr"});
    OpenSsl({"x509", "-req", "-in", name + ".csr", "-CA", ca + ".pem", "-CAkey", ca + ".key",
             "-CAcreateserial", "-days", "1", "-extfile", name + ".ext", "-out", name + ".pem"});
  }
  std::string Pem(const std::string& name) { return dir_ / (name + ".pem"); }
  std::string Key(const std::string& name) { return dir_ / (name + ".key"); }

  TempDir dir_;
};

TEST_F(TlsTest, ClientsTrustingTheCoordinatorsCaAreServedOthersRefused) {
  CoordinatorProcess coordinator(dir_.path(),
                                 {"--tls-cert", Pem("server"), "--tls-key", Key("server")});
  coordinator.Start();
  auto trusted = RunCli(coordinator.address(), {"--tls-ca", Pem("ca"), "jobs"}, 30);
  EXPECT_EQ(trusted.exit_code, 0) << trusted.output;
  auto plaintext = RunCli(coordinator.address(), {"jobs"}, 30);
  EXPECT_EQ(plaintext.exit_code, 3) << plaintext.output;  // unreachable, and told why it may be
  EXPECT_NE(plaintext.output.find("or it serves TLS and wants its CA with --tls-ca"),
            std::string::npos)
      << plaintext.output;
  auto other_ca = RunCli(coordinator.address(), {"--tls-ca", Pem("other-ca"), "jobs"}, 30);
  EXPECT_EQ(other_ca.exit_code, 3) << other_ca.output;
  EXPECT_NE(other_ca.output.find("certificate is not signed by the CA of --tls-ca"),
            std::string::npos)
      << other_ca.output;
}

TEST_F(TlsTest, ATlsClientOfAPlaintextCoordinatorIsToldItDoesNotServeTls) {
  CoordinatorProcess coordinator(dir_.path());  // --plaintext
  coordinator.Start();
  auto tls = RunCli(coordinator.address(), {"--tls-ca", Pem("ca"), "jobs"}, 30);
  EXPECT_EQ(tls.exit_code, 3) << tls.output;
  EXPECT_NE(tls.output.find("the coordinator does not serve TLS"), std::string::npos) << tls.output;
}

TEST_F(TlsTest, MutualTlsServesOnlyPeersWithACertificateOfItsClientCa) {
  CoordinatorProcess coordinator(dir_.path(), {"--tls-cert", Pem("server"), "--tls-key",
                                               Key("server"), "--tls-client-ca", Pem("ca")});
  coordinator.Start();
  auto with_cert = RunCli(
      coordinator.address(),
      {"--tls-ca", Pem("ca"), "--tls-cert", Pem("client"), "--tls-key", Key("client"), "jobs"}, 30);
  EXPECT_EQ(with_cert.exit_code, 0) << with_cert.output;
  auto without_cert = RunCli(coordinator.address(), {"--tls-ca", Pem("ca"), "jobs"}, 30);
  EXPECT_NE(without_cert.exit_code, 0) << without_cert.output;
  auto other_ca = RunCli(
      coordinator.address(),
      {"--tls-ca", Pem("ca"), "--tls-cert", Pem("stranger"), "--tls-key", Key("stranger"), "jobs"},
      30);
  EXPECT_NE(other_ca.exit_code, 0) << other_ca.output;

  // A worker with a certificate of the CA registers; one from another CA never does.
  auto worker =
      StartWorker(coordinator.address(), dir_.path(), "good", "cpu:1",
                  {"--tls-ca", Pem("ca"), "--tls-cert", Pem("client"), "--tls-key", Key("client")});
  auto stranger = StartWorker(
      coordinator.address(), dir_.path(), "stranger", "cpu:1",
      {"--tls-ca", Pem("ca"), "--tls-cert", Pem("stranger"), "--tls-key", Key("stranger")});
  std::string listed;
  EXPECT_TRUE(WaitFor(
      [&] {
        listed = RunCli(coordinator.address(),
                        {"--tls-ca", Pem("ca"), "--tls-cert", Pem("client"), "--tls-key",
                         Key("client"), "workers", "--json"},
                        30)
                     .output;
        return listed.find("\"worker_id\"") != std::string::npos;
      },
      std::chrono::seconds(60)))
      << listed;
  std::this_thread::sleep_for(std::chrono::seconds(2));
  listed = RunCli(coordinator.address(),
                  {"--tls-ca", Pem("ca"), "--tls-cert", Pem("client"), "--tls-key", Key("client"),
                   "workers", "--json"},
                  30)
               .output;
  EXPECT_EQ(listed.find("\"worker_id\""), listed.rfind("\"worker_id\""))
      << "two workers: " << listed;
}

// Served over TLS, the dashboard tells browsers to come back over https only
// (web/tests/dashboard_test.mjs: not over plain HTTP).
TEST_F(TlsTest, TheDashboardOverTlsTellsBrowsersToKeepToHttps) {
  CoordinatorProcess coordinator(dir_.path(),
                                 {"--tls-cert", Pem("server"), "--tls-key", Key("server"), "--http",
                                  "127.0.0.1:0", "--http-port-file", dir_ / "http.port"});
  coordinator.Start();
  httplib::SSLClient https("127.0.0.1", std::stoi(ReadPortFile(dir_ / "http.port")));
  https.set_ca_cert_path(Pem("ca").c_str());
  https.enable_server_certificate_verification(true);
  https.set_connection_timeout(5);
  https.set_read_timeout(10);
  auto page = https.Get("/");
  ASSERT_TRUE(page) << httplib::to_string(page.error());
  EXPECT_EQ(page->status, 200);
  EXPECT_EQ(page->get_header_value("Strict-Transport-Security"), "max-age=31536000");
}

// A key that is not the certificate's is named at start, before any file is
// made; it read "cannot listen on ... (is another process serving there?)".
TEST_F(TlsTest, AKeyThatIsNotTheCertificatesIsRefusedNamingBoth) {
  RunOptions options;
  options.timeout_s = 30;
  auto run = RunProcess({BinaryPath("bin/tunefleet-coordinator"), "--db", dir_ / "t.db",
                         "--artifacts", dir_ / "artifacts", "--listen", "127.0.0.1:0", "--tls-cert",
                         Pem("server"), "--tls-key", Key("ca")},
                        options);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->exit_code, 2) << run->output;
  EXPECT_NE(run->output.find("--tls-key: " + Key("ca") + " is not the key of the certificate in " +
                             Pem("server")),
            std::string::npos)
      << run->output;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "t.db"));
  auto client =
      RunProcess({BinaryPath("bin/tunefleet"), "--coordinator", "127.0.0.1:1", "--tls-ca",
                  Pem("ca"), "--tls-cert", Pem("client"), "--tls-key", Key("stranger"), "jobs"},
                 options);
  ASSERT_TRUE(client.ok());
  EXPECT_EQ(client->exit_code, 2) << client->output;
  EXPECT_NE(client->output.find("is not the key of the certificate in " + Pem("client")),
            std::string::npos)
      << client->output;
}

TEST_F(TlsTest, CoordinatorWithoutTlsOrPlaintextRefusesToStart) {
  RunOptions options;
  options.timeout_s = 30;
  auto run = RunProcess({BinaryPath("bin/tunefleet-coordinator"), "--db", dir_ / "t.db",
                         "--artifacts", dir_ / "artifacts", "--listen", "127.0.0.1:0"},
                        options);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->exit_code, 2);
  EXPECT_NE(run->output.find("pass --tls-cert and --tls-key to serve over TLS, or --plaintext"),
            std::string::npos)
      << run->output;
}

}  // namespace
}  // namespace tf::testing
