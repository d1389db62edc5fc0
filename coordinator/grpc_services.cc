#include "coordinator/grpc_services.h"

#include <spdlog/spdlog.h>

#include <fstream>

#include "kernelspec/best_query.h"

namespace tf::coordinator {
namespace {

// Fills `out` from a Result, or returns its error.
template <typename T, typename Out>
grpc::Status Reply(Result<T> result, Out* out) {
  if (!result.ok()) {
    // The caller sees it, but the operator must too: a full disk, a
    // read-only database, a broken invariant.
    const Code code = result.status().code();
    if (code == Code::kUnavailable || code == Code::kInternal) {
      spdlog::error("{}", result.status().message());
    }
    return ToGrpcStatus(result.status());
  }
  *out = std::move(result).value();
  return grpc::Status::OK;
}

grpc::Status RequireJobId(int64_t job_id) {
  if (job_id <= 0) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "job_id must be a positive job id");
  }
  return grpc::Status::OK;
}

}  // namespace

grpc::Status TuneFleetService::SubmitJob(grpc::ServerContext* context,
                                         const v1::SubmitJobRequest* request, v1::Job* job) {
  auto caller = gate_.Check(*context, auth::Rpc::kSubmitJob);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  return Reply(c_.Submit(*request, *caller), job);
}

grpc::Status TuneFleetService::GetJob(grpc::ServerContext* context,
                                      const v1::GetJobRequest* request, v1::Job* job) {
  auto caller = gate_.Check(*context, auth::Rpc::kGetJob);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  if (auto bad = RequireJobId(request->job_id()); !bad.ok()) return bad;
  return Reply(c_.GetJob(request->job_id(), *caller), job);
}

grpc::Status TuneFleetService::WatchJob(grpc::ServerContext* context,
                                        const v1::GetJobRequest* request,
                                        grpc::ServerWriter<v1::JobEvent>* writer) {
  auto caller = gate_.Check(*context, auth::Rpc::kWatchJob);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  if (auto bad = RequireJobId(request->job_id()); !bad.ok()) return bad;
  // The token is checked again while the stream lasts: a revoked one ends
  // it, as it fails any new call.
  Status refused = Status::Ok();
  Status status = c_.WatchJob(
      request->job_id(),
      [&](const v1::Job& job) {
        v1::JobEvent event;
        *event.mutable_job() = job;
        return writer->Write(event);
      },
      [&] {
        if (context->IsCancelled()) return true;
        refused = gate_.Check(*context, auth::Rpc::kWatchJob).status();
        return !refused.ok();
      },
      *caller);
  return ToGrpcStatus(refused.ok() ? status : refused);
}

grpc::Status TuneFleetService::CancelJob(grpc::ServerContext* context,
                                         const v1::GetJobRequest* request, v1::Job* job) {
  auto caller = gate_.Check(*context, auth::Rpc::kCancelJob);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  if (auto bad = RequireJobId(request->job_id()); !bad.ok()) return bad;
  return Reply(c_.Cancel(request->job_id(), *caller), job);
}

grpc::Status TuneFleetService::ListJobs(grpc::ServerContext* context,
                                        const v1::ListJobsRequest* request,
                                        v1::ListJobsResponse* response) {
  auto caller = gate_.Check(*context, auth::Rpc::kListJobs);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  auto jobs = c_.ListJobs(request->limit(), *caller);
  if (!jobs.ok()) return ToGrpcStatus(jobs.status());
  for (auto& job : *jobs) *response->add_jobs() = std::move(job);
  return grpc::Status::OK;
}

grpc::Status TuneFleetService::ListResults(grpc::ServerContext* context,
                                           const v1::GetJobRequest* request,
                                           v1::ListResultsResponse* response) {
  auto caller = gate_.Check(*context, auth::Rpc::kListResults);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  if (auto bad = RequireJobId(request->job_id()); !bad.ok()) return bad;
  auto results = c_.ListResults(request->job_id(), *caller);
  if (!results.ok()) return ToGrpcStatus(results.status());
  for (auto& r : *results) *response->add_results() = std::move(r);
  return grpc::Status::OK;
}

grpc::ServerUnaryReactor* TuneFleetService::QueryBest(grpc::CallbackServerContext* context,
                                                      const v1::QueryBestRequest* request,
                                                      v1::QueryBestResponse* response) {
  auto* reactor = context->DefaultReactor();
  auto caller = gate_.Check(*context, auth::Rpc::kQueryBest);
  if (!caller.ok()) {
    reactor->Finish(ToGrpcStatus(caller.status()));
  } else if (Status bad = kernelspec::CheckBestQuery(*request); !bad.ok()) {
    reactor->Finish(ToGrpcStatus(bad));
  } else {
    *response = c_.QueryBest(*request);
    reactor->Finish(grpc::Status::OK);
  }
  return reactor;
}

grpc::Status TuneFleetService::ListWorkers(grpc::ServerContext* context,
                                           const v1::ListWorkersRequest*,
                                           v1::ListWorkersResponse* response) {
  auto caller = gate_.Check(*context, auth::Rpc::kListWorkers);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  for (auto& w : c_.ListWorkers()) *response->add_workers() = std::move(w);
  return grpc::Status::OK;
}

grpc::Status TuningResultsService::ImportResults(grpc::ServerContext* context,
                                                 const v1::ImportResultsRequest* request,
                                                 v1::ImportResultsResponse* response) {
  auto caller = gate_.Check(*context, auth::Rpc::kImportResults);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  return Reply(c_.ImportResults(*request), response);
}

grpc::Status TuningResultsService::ListBest(grpc::ServerContext* context,
                                            const v1::ListBestRequest* request,
                                            v1::ListBestResponse* response) {
  auto caller = gate_.Check(*context, auth::Rpc::kListBest);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  if (request->kernel().empty()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "kernel must be set");
  }
  for (auto& e : c_.ListBest(*request)) *response->add_entries() = std::move(e);
  return grpc::Status::OK;
}

grpc::Status TuningResultsService::ListKernels(grpc::ServerContext* context,
                                               const v1::ListKernelsRequest* request,
                                               v1::ListKernelsResponse* response) {
  auto caller = gate_.Check(*context, auth::Rpc::kListKernels);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  for (auto& k : c_.ListKernels(*request)) *response->add_kernels() = std::move(k);
  return grpc::Status::OK;
}

grpc::Status TuneFleetService::CreateToken(grpc::ServerContext* context,
                                           const v1::CreateTokenRequest* request,
                                           v1::CreateTokenResponse* response) {
  auto caller = gate_.Check(*context, auth::Rpc::kCreateToken);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  return Reply(c_.CreateToken(*request), response);
}

grpc::Status TuneFleetService::ListTokens(grpc::ServerContext* context,
                                          const v1::ListTokensRequest*,
                                          v1::ListTokensResponse* response) {
  auto caller = gate_.Check(*context, auth::Rpc::kListTokens);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  for (auto& t : c_.ListTokens()) *response->add_tokens() = std::move(t);
  return grpc::Status::OK;
}

grpc::Status TuneFleetService::RevokeToken(grpc::ServerContext* context,
                                           const v1::RevokeTokenRequest* request,
                                           v1::TokenInfo* response) {
  auto caller = gate_.Check(*context, auth::Rpc::kRevokeToken);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  return Reply(c_.RevokeToken(request->token_id()), response);
}

grpc::Status TuneFleetService::SetKernelOwner(grpc::ServerContext* context,
                                              const v1::SetKernelOwnerRequest* request,
                                              v1::SetKernelOwnerResponse* response) {
  auto caller = gate_.Check(*context, auth::Rpc::kSetKernelOwner);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  return Reply(c_.SetKernelOwner(*request), response);
}

grpc::Status WorkerServiceImpl::Register(grpc::ServerContext* context,
                                         const v1::RegisterRequest* request,
                                         v1::RegisterResponse* response) {
  auto caller = gate_.Check(*context, auth::Rpc::kRegister);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  return Reply(c_.Register(*request, *caller), response);
}

grpc::Status WorkerServiceImpl::Heartbeat(grpc::ServerContext* context,
                                          const v1::HeartbeatRequest* request,
                                          v1::HeartbeatResponse* response) {
  auto caller = gate_.Check(*context, auth::Rpc::kHeartbeat);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  return Reply(c_.Heartbeat(*request, *caller), response);
}

grpc::Status WorkerServiceImpl::AcquireLease(grpc::ServerContext* context,
                                             const v1::AcquireLeaseRequest* request,
                                             v1::AcquireLeaseResponse* response) {
  auto caller = gate_.Check(*context, auth::Rpc::kAcquireLease);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  return Reply(c_.AcquireLease(*request, *caller, [context] { return context->IsCancelled(); }),
               response);
}

grpc::Status WorkerServiceImpl::ReportResults(grpc::ServerContext* context,
                                              const v1::ReportResultsRequest* request,
                                              v1::ReportResultsResponse* response) {
  auto caller = gate_.Check(*context, auth::Rpc::kReportResults);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  return Reply(c_.ReportResults(*request, *caller), response);
}

grpc::Status WorkerServiceImpl::FetchArtifact(grpc::ServerContext* context,
                                              const v1::FetchArtifactRequest* request,
                                              grpc::ServerWriter<v1::ArtifactChunk>* writer) {
  auto caller = gate_.Check(*context, auth::Rpc::kFetchArtifact);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  auto path = c_.ArtifactPath(request->sha256());
  if (!path.ok()) return ToGrpcStatus(path.status());
  std::ifstream in(*path, std::ios::binary | std::ios::ate);
  if (!in) return grpc::Status(grpc::StatusCode::INTERNAL, "cannot read artifact " + *path);
  int64_t total = in.tellg();
  in.seekg(0);
  std::string buffer(1 << 20, '\0');
  do {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    v1::ArtifactChunk chunk;
    chunk.set_data(buffer.data(), static_cast<size_t>(in.gcount()));
    chunk.set_total_size(total);
    if (!writer->Write(chunk)) return grpc::Status(grpc::StatusCode::CANCELLED, "client went away");
  } while (in);
  return grpc::Status::OK;
}

}  // namespace tf::coordinator
