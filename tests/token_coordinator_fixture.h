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
