// The coordinator's plaintext health port (--health-listen) speaks the
// standard grpc.health.v1 protocol as probes and load balancers use it:
// Check for the kubelet, Watch for gRPC's client-side health checking.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>

#include "grpc/health/v1/health.grpc.pb.h"
#include "tests/test_util.h"

namespace tf::testing {
namespace {

namespace health = grpc::health::v1;
using std::chrono::seconds;

class HealthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    coordinator_ = Process::Start(
        {BinaryPath("bin/tunefleet-coordinator"), "--listen", "127.0.0.1:0", "--plaintext",
         "--allow-anonymous", "--db", dir_ / "tunefleet.db", "--artifacts", dir_ / "artifacts",
         "--port-file", dir_ / "port", "--health-listen", "127.0.0.1:0", "--health-port-file",
         dir_ / "health.port"},
        dir_ / "coordinator.log");
    // Ready: the main port is written after the health port.
    ASSERT_TRUE(WaitFor([&] { return std::filesystem::exists(dir_ / "port"); }, seconds(30)))
        << coordinator_->Log();
    stub_ = health::Health::NewStub(grpc::CreateChannel(
        "127.0.0.1:" + ReadPortFile(dir_ / "health.port"), grpc::InsecureChannelCredentials()));
  }

  grpc::Status Check(const std::string& service, health::HealthCheckResponse* response) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(5));
    health::HealthCheckRequest request;
    request.set_service(service);
    return stub_->Check(&context, request, response);
  }

  TempDir dir_;
  std::unique_ptr<Process> coordinator_;
  std::unique_ptr<health::Health::Stub> stub_;
};

TEST_F(HealthTest, CheckAnswersForTheProcessAndTheServicesAndNotForOthers) {
  for (const char* service : {"", "tunefleet.v1.TuneFleet", "tunefleet.v1.WorkerService"}) {
    health::HealthCheckResponse response;
    ASSERT_TRUE(Check(service, &response).ok()) << service;
    EXPECT_EQ(response.status(), health::HealthCheckResponse::SERVING) << service;
  }
  health::HealthCheckResponse response;
  EXPECT_EQ(Check("tunefleet.v1.Nothing", &response).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(HealthTest, WatchSeesTheCoordinatorStopServingAtSigterm) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + seconds(20));
  health::HealthCheckRequest request;
  request.set_service("tunefleet.v1.TuneFleet");
  auto stream = stub_->Watch(&context, request);
  health::HealthCheckResponse response;
  ASSERT_TRUE(stream->Read(&response));
  EXPECT_EQ(response.status(), health::HealthCheckResponse::SERVING);

  kill(coordinator_->pid(), SIGTERM);
  ASSERT_TRUE(stream->Read(&response));
  EXPECT_EQ(response.status(), health::HealthCheckResponse::NOT_SERVING);
}

}  // namespace
}  // namespace tf::testing
