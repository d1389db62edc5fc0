// A forgotten worker's id against a real coordinator over 127.0.0.1 and a
// real SQLite file: a worker silent past --worker-retention-ms with no lease
// is forgotten (gone from the listing), but its id stays its token's, before
// and after a restart of the coordinator. Another worker token can neither
// report for the candidates once leased to it (they still name it) nor
// register under it; the worker's own token comes back under it.
#include <gtest/gtest.h>

#include <algorithm>

#include "auth/bearer.h"
#include "auth/token_file.h"
#include "common/files.h"
#include "tests/test_util.h"
#include "tests/token_coordinator_fixture.h"
#include "tunefleet/v1/tunefleet.grpc.pb.h"
#include "tunefleet/v1/worker.grpc.pb.h"

namespace tf::testing {
namespace {

namespace v1 = ::tunefleet::v1;
using std::chrono::seconds;

class ForgottenWorkerTest : public TokenCoordinatorTest {
 protected:
  void SetUp() override {
    StartCoordinator(
        {"--lease-ttl-ms", "3000", "--heartbeat-ms", "500", "--worker-retention-ms", "500"});
  }

  // A worker with one CPU device, the slow spec's target.
  grpc::Status Register(const std::string& token, std::string* worker_id,
                        const std::string& previous = "") {
    v1::RegisterRequest request;
    request.set_hostname("forgotten-test");
    request.set_previous_worker_id(previous);
    auto* device = request.add_devices();
    device->set_vendor("cpu");
    device->set_arch("host");
    device->set_device_class("cpu-forgotten");
    v1::RegisterResponse response;
    grpc::Status status = workers_->Register(Context(token).get(), request, &response);
    if (worker_id) *worker_id = response.worker_id();
    return status;
  }

  std::vector<std::string> ListedWorkers() {
    v1::ListWorkersResponse response;
    grpc::Status status =
        clients_->ListWorkers(Context(admin_).get(), v1::ListWorkersRequest(), &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    std::vector<std::string> ids;
    for (const auto& w : response.workers()) ids.push_back(w.worker_id());
    return ids;
  }

  int ResultsOf(int64_t job_id) {
    v1::GetJobRequest request;
    request.set_job_id(job_id);
    v1::ListResultsResponse response;
    grpc::Status status = clients_->ListResults(Context(admin_).get(), request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response.results_size();
  }
};

TEST_F(ForgottenWorkerTest, AnotherTokenNeitherReportsAsNorTakesOverAForgottenWorker) {
  const std::string first = CreateToken(v1::ROLE_WORKER, "first");
  const std::string second = CreateToken(v1::ROLE_WORKER, "second");
  std::string first_id;
  ASSERT_TRUE(Register(first, &first_id).ok());
  int64_t job_id = 0;
  ASSERT_TRUE(Submit(CreateToken(v1::ROLE_SUBMITTER, "submitter"), &job_id).ok());

  // The first worker's lease, once the job's configurations are built.
  v1::AcquireLeaseResponse leased;
  ASSERT_TRUE(WaitFor(
      [&] {
        v1::AcquireLeaseRequest request;
        request.set_worker_id(first_id);
        request.set_wait_ms(1000);
        grpc::Status status = workers_->AcquireLease(Context(first).get(), request, &leased);
        EXPECT_TRUE(status.ok()) << status.error_message();
        return leased.has_lease();
      },
      seconds(120)))
      << coordinator_->Log();
  const v1::Lease lease = leased.lease();
  ASSERT_GT(lease.candidates_size(), 0);

  // Silent from now on: its lease expires, then it is forgotten.
  ASSERT_TRUE(WaitFor(
      [&] {
        const auto ids = ListedWorkers();
        return std::find(ids.begin(), ids.end(), first_id) == ids.end();
      },
      seconds(30)))
      << coordinator_->Log();

  const std::string refusal = "worker " + first_id + " belongs to another token";
  for (int start = 0; start < 2; ++start) {
    SCOPED_TRACE(start == 0 ? "forgotten" : "after a restart");
    v1::ReportResultsResponse reported;
    grpc::Status status = Report(second, first_id, lease, /*forged*/ 1, &reported);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED) << reported.DebugString();
    EXPECT_EQ(status.error_message(), refusal);
    EXPECT_EQ(ResultsOf(job_id), 0);
    status = Register(second, nullptr, first_id);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
    EXPECT_EQ(status.error_message(), refusal);

    RestartCoordinator();
  }

  // Its own token brings it back under its id.
  std::string back_id;
  grpc::Status back = Register(first, &back_id, first_id);
  ASSERT_TRUE(back.ok()) << back.error_message();
  EXPECT_EQ(back_id, first_id);
  const auto ids = ListedWorkers();
  EXPECT_NE(std::find(ids.begin(), ids.end(), first_id), ids.end());
}

}  // namespace
}  // namespace tf::testing
