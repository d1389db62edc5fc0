// The gRPC faces of the coordinator: TuneFleet and TuningResults for clients,
// WorkerService for workers. Each RPC first checks its caller's bearer token against the
// policy table (auth/roles.h), then validates its request, calls the
// Coordinator and maps tf::Status onto gRPC status codes.
#pragma once

#include <grpcpp/grpcpp.h>

#include "auth/bearer.h"
#include "common/grpc_status.h"
#include "coordinator/coordinator.h"
#include "tunefleet/v1/results.grpc.pb.h"
#include "tunefleet/v1/tunefleet.grpc.pb.h"
#include "tunefleet/v1/worker.grpc.pb.h"

namespace tf::coordinator {

// Whether a call without a bearer token is served, with every right
// (--allow-anonymous), or refused with UNAUTHENTICATED.
enum class Anonymous { kRefused, kAllowed };

// QueryBest uses gRPC's callback API: it answers from memory on gRPC's own
// threads, with no hand-off to a sync worker thread (the hottest RPC).
class TuneFleetService final
    : public v1::TuneFleet::WithCallbackMethod_QueryBest<v1::TuneFleet::Service> {
 public:
  TuneFleetService(Coordinator& coordinator, Anonymous anonymous)
      : c_(coordinator), gate_(coordinator.tokens(), anonymous == Anonymous::kAllowed) {}

  grpc::Status SubmitJob(grpc::ServerContext*, const v1::SubmitJobRequest*, v1::Job*) override;
  grpc::Status GetJob(grpc::ServerContext*, const v1::GetJobRequest*, v1::Job*) override;
  grpc::Status WatchJob(grpc::ServerContext*, const v1::GetJobRequest*,
                        grpc::ServerWriter<v1::JobEvent>*) override;
  grpc::Status CancelJob(grpc::ServerContext*, const v1::GetJobRequest*, v1::Job*) override;
  grpc::Status ListJobs(grpc::ServerContext*, const v1::ListJobsRequest*,
                        v1::ListJobsResponse*) override;
  grpc::Status ListResults(grpc::ServerContext*, const v1::GetJobRequest*,
                           v1::ListResultsResponse*) override;
  grpc::ServerUnaryReactor* QueryBest(grpc::CallbackServerContext* context,
                                      const v1::QueryBestRequest* request,
                                      v1::QueryBestResponse* response) override;
  grpc::Status ListWorkers(grpc::ServerContext*, const v1::ListWorkersRequest*,
                           v1::ListWorkersResponse*) override;
  grpc::Status CreateToken(grpc::ServerContext*, const v1::CreateTokenRequest*,
                           v1::CreateTokenResponse*) override;
  grpc::Status ListTokens(grpc::ServerContext*, const v1::ListTokensRequest*,
                          v1::ListTokensResponse*) override;
  grpc::Status RevokeToken(grpc::ServerContext*, const v1::RevokeTokenRequest*,
                           v1::TokenInfo*) override;
  grpc::Status SetKernelOwner(grpc::ServerContext*, const v1::SetKernelOwnerRequest*,
                              v1::SetKernelOwnerResponse*) override;

 private:
  Coordinator& c_;
  const auth::Gate gate_;
};

class TuningResultsService final : public v1::TuningResults::Service {
 public:
  TuningResultsService(Coordinator& coordinator, Anonymous anonymous)
      : c_(coordinator), gate_(coordinator.tokens(), anonymous == Anonymous::kAllowed) {}

  grpc::Status ImportResults(grpc::ServerContext*, const v1::ImportResultsRequest*,
                             v1::ImportResultsResponse*) override;
  grpc::Status ListBest(grpc::ServerContext*, const v1::ListBestRequest*,
                        v1::ListBestResponse*) override;
  grpc::Status ListKernels(grpc::ServerContext*, const v1::ListKernelsRequest*,
                           v1::ListKernelsResponse*) override;

 private:
  Coordinator& c_;
  const auth::Gate gate_;
};

class WorkerServiceImpl final : public v1::WorkerService::Service {
 public:
  WorkerServiceImpl(Coordinator& coordinator, Anonymous anonymous)
      : c_(coordinator), gate_(coordinator.tokens(), anonymous == Anonymous::kAllowed) {}

  grpc::Status Register(grpc::ServerContext*, const v1::RegisterRequest*,
                        v1::RegisterResponse*) override;
  grpc::Status Heartbeat(grpc::ServerContext*, const v1::HeartbeatRequest*,
                         v1::HeartbeatResponse*) override;
  grpc::Status AcquireLease(grpc::ServerContext*, const v1::AcquireLeaseRequest*,
                            v1::AcquireLeaseResponse*) override;
  grpc::Status ReportResults(grpc::ServerContext*, const v1::ReportResultsRequest*,
                             v1::ReportResultsResponse*) override;
  grpc::Status FetchArtifact(grpc::ServerContext*, const v1::FetchArtifactRequest*,
                             grpc::ServerWriter<v1::ArtifactChunk>*) override;

 private:
  Coordinator& c_;
  const auth::Gate gate_;
};

}  // namespace tf::coordinator
