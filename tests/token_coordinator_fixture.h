// A real coordinator over 127.0.0.1 with tokens required, its admin token,
// and stubs of its services: for the tests of who may do what.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "auth/bearer.h"
#include "auth/token_file.h"
#include "tests/test_util.h"
#include "tunefleet/v1/results.grpc.pb.h"
#include "tunefleet/v1/tunefleet.grpc.pb.h"
#include "tunefleet/v1/worker.grpc.pb.h"

namespace tf::testing {

class TokenCoordinatorTest : public ::testing::Test {
 protected:
  // Starts the coordinator with `flags` besides its admin token file.
  void StartCoordinator(std::vector<std::string> flags) {
    flags.insert(flags.begin(), {"--admin-token-file", dir_ / "admin.token"});
    coordinator_ = std::make_unique<CoordinatorProcess>(dir_.path(), flags);
    coordinator_->Start();
    admin_ = *auth::ReadTokenFile(dir_ / "admin.token");
    auto channel = grpc::CreateChannel(coordinator_->address(), grpc::InsecureChannelCredentials());
    clients_ = ::tunefleet::v1::TuneFleet::NewStub(channel);
    workers_ = ::tunefleet::v1::WorkerService::NewStub(channel);
    results_ = ::tunefleet::v1::TuningResults::NewStub(channel);
  }

  // Kills the coordinator and starts it again on its database, then waits
  // for a call to reach it: the first may go to the connection the kill
  // closed.
  void RestartCoordinator() {
    coordinator_->Kill();
    coordinator_->Start();
    ASSERT_TRUE(WaitFor(
        [&] {
          ::tunefleet::v1::ListWorkersResponse response;
          return clients_->ListWorkers(Context(admin_).get(), {}, &response).error_code() !=
                 grpc::StatusCode::UNAVAILABLE;
        },
        std::chrono::seconds(10)));
  }

  std::unique_ptr<grpc::ClientContext> Context(const std::string& token) {
    auto context = std::make_unique<grpc::ClientContext>();
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    context->set_wait_for_ready(true);  // across a restart of the coordinator
    auth::AttachToken(*context, token);
    return context;
  }

  std::string CreateToken(::tunefleet::v1::Role role, const std::string& name) {
    ::tunefleet::v1::CreateTokenRequest request;
    request.set_name(name);
    request.set_role(role);
    ::tunefleet::v1::CreateTokenResponse response;
    grpc::Status status = clients_->CreateToken(Context(admin_).get(), request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response.token();
  }

  // Two configurations of the slow spec (a CPU kernel), under `kernel` when
  // given.
  grpc::Status Submit(const std::string& token, int64_t* job_id = nullptr,
                      const std::string& kernel = "") {
    kernelspec::LoadedSpec spec = LoadTestSpec("tests/integration/data/slow/slow.yaml");
    ::tunefleet::v1::SubmitJobRequest request;
    *request.mutable_spec() = spec.spec;
    request.mutable_spec()->mutable_params(0)->mutable_range()->set_stop(2);
    if (!kernel.empty()) request.mutable_spec()->set_name(kernel);
    for (const auto& s : spec.sources) *request.add_sources() = s;
    ::tunefleet::v1::Job job;
    grpc::Status status = clients_->SubmitJob(Context(token).get(), request, &job);
    if (job_id) *job_id = job.job_id();
    return status;
  }

  // Every candidate of `lease` reported OK in `median_ns`, as `worker_id`
  // with `token`.
  grpc::Status Report(const std::string& token, const std::string& worker_id,
                      const ::tunefleet::v1::Lease& lease, double median_ns,
                      ::tunefleet::v1::ReportResultsResponse* response) {
    ::tunefleet::v1::ReportResultsRequest request;
    request.set_worker_id(worker_id);
    request.set_lease_id(lease.lease_id());
    for (const auto& candidate : lease.candidates()) {
      auto* result = request.add_results();
      result->set_candidate_id(candidate.candidate_id());
      result->set_status(::tunefleet::v1::RESULT_STATUS_OK);
      result->mutable_timing()->set_median_ns(median_ns);
    }
    return workers_->ReportResults(Context(token).get(), request, response);
  }

  TempDir dir_;
  std::unique_ptr<CoordinatorProcess> coordinator_;
  std::string admin_;
  std::unique_ptr<::tunefleet::v1::TuneFleet::Stub> clients_;
  std::unique_ptr<::tunefleet::v1::WorkerService::Stub> workers_;
  std::unique_ptr<::tunefleet::v1::TuningResults::Stub> results_;
};

}  // namespace tf::testing
