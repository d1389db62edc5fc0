#include "client/client.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <thread>

#include "auth/bearer.h"
#include "client/channel_setup.h"
#include "client/job_state.h"
#include "common/backoff.h"
#include "common/grpc_status.h"
#include "common/number_text.h"
#include "kernelspec/config.h"

namespace tf::client {
namespace {

v1::GetJobRequest JobRequest(int64_t job_id) {
  v1::GetJobRequest request;
  request.set_job_id(job_id);
  return request;
}

}  // namespace

Result<std::unique_ptr<Client>> Client::Connect(const std::string& address, ClientOptions options) {
  TF_ASSIGN_OR_RETURN(auto channels, ConnectCoordinator(address, options));
  return std::unique_ptr<Client>(new Client(std::move(channels), options));
}

std::unique_ptr<v1::TuneFleet::Stub> Client::Stub() {
  return v1::TuneFleet::NewStub(channels_->Pick(ChannelWait(options_.call_timeout_s)));
}

template <typename Request, typename Response>
Result<Response> Client::Call(grpc::Status (v1::TuneFleet::Stub::*method)(grpc::ClientContext*,
                                                                          const Request&,
                                                                          Response*),
                              const Request& request) {
  grpc::ClientContext context;
  PrepareCall(options_, &context);
  Response response;
  TF_RETURN_IF_ERROR(FromGrpc((Stub().get()->*method)(&context, request, &response)));
  return response;
}

Status Client::FromGrpc(const grpc::Status& status) const {
  return FromGrpcStatus(status, address(), options_);
}

Result<v1::Job> Client::Submit(const v1::KernelSpec& spec,
                               const std::vector<v1::SourceFile>& sources, int priority) {
  v1::SubmitJobRequest request;
  *request.mutable_spec() = spec;
  request.mutable_sources()->Assign(sources.begin(), sources.end());
  request.set_priority(priority);
  return Call(&v1::TuneFleet::Stub::SubmitJob, request);
}

Result<v1::Job> Client::GetJob(int64_t job_id) {
  return Call(&v1::TuneFleet::Stub::GetJob, JobRequest(job_id));
}

Result<v1::Job> Client::WatchJob(int64_t job_id,
                                 const std::function<void(const v1::Job&)>& on_update,
                                 const std::function<void(const Status&)>& on_lost) {
  using Clock = std::chrono::steady_clock;
  const auto give_up_after = std::chrono::duration<double>(options_.watch_reconnect_s);
  Backoff backoff(std::chrono::milliseconds(100), std::chrono::seconds(5));
  bool lost_contact = false;
  Clock::time_point lost_since;
  Status lost;  // why, when lost_contact
  v1::Job last;
  for (;;) {
    if (lost_contact) {
      // Waits for the coordinator to answer until watch_reconnect_s is over:
      // connected, a coordinator that answers nothing (stopped) would take
      // the watch's stream and keep it until keepalive gave up on it.
      grpc::ClientContext probe;
      probe.set_wait_for_ready(true);
      probe.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::duration_cast<std::chrono::system_clock::duration>(
                             give_up_after - (Clock::now() - lost_since)));
      auth::AttachToken(probe, options_.token);
      v1::Job job;
      const grpc::Status answered = Stub()->GetJob(&probe, JobRequest(job_id), &job);
      if (answered.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
        return Status::Unavailable("coordinator at " + address() +
                                   " did not answer the watch of job " + std::to_string(job_id) +
                                   " for " + NumberText(options_.watch_reconnect_s) + " s (" +
                                   lost.message() + ")");
      }
      if (!answered.ok()) {
        Status refused = FromGrpc(answered);
        if (refused.code() != Code::kUnavailable) return refused;
        std::this_thread::sleep_for(backoff.Next());
        continue;
      }
    }
    grpc::ClientContext context;
    auth::AttachToken(context, options_.token);
    auto stub = Stub();
    std::unique_ptr<grpc::ClientReader<v1::JobEvent>> reader =
        stub->WatchJob(&context, JobRequest(job_id));
    v1::JobEvent event;
    while (reader->Read(&event)) {
      if (lost_contact) {
        lost_contact = false;
        backoff.Reset();
      }
      last = event.job();
      on_update(last);
      if (IsTerminal(last.state())) {
        context.TryCancel();  // the final state is all we wait for
        break;
      }
    }
    const grpc::Status status = reader->Finish();
    if (IsTerminal(last.state())) return last;
    lost = FromGrpc(status);
    if (lost.ok()) {
      lost = Status::Unavailable("coordinator at " + address() + " ended the watch of job " +
                                 std::to_string(job_id) + " while it was " +
                                 (last.job_id() == 0 ? "unknown" : JobStateName(last.state())));
    }
    // Only a coordinator that went away is waited for; a refusal is final.
    if (lost.code() != Code::kUnavailable) return lost;
    if (!lost_contact) {
      lost_contact = true;
      lost_since = Clock::now();
      if (on_lost) on_lost(lost);
    }
    std::this_thread::sleep_for(backoff.Next());
  }
}

Result<v1::Job> Client::Cancel(int64_t job_id) {
  return Call(&v1::TuneFleet::Stub::CancelJob, JobRequest(job_id));
}

Result<std::vector<v1::Job>> Client::ListJobs(int limit) {
  v1::ListJobsRequest request;
  request.set_limit(limit);
  TF_ASSIGN_OR_RETURN(v1::ListJobsResponse response, Call(&v1::TuneFleet::Stub::ListJobs, request));
  return std::vector<v1::Job>(response.jobs().begin(), response.jobs().end());
}

Result<std::vector<v1::CandidateResult>> Client::ListResults(int64_t job_id) {
  TF_ASSIGN_OR_RETURN(v1::ListResultsResponse response,
                      Call(&v1::TuneFleet::Stub::ListResults, JobRequest(job_id)));
  return std::vector<v1::CandidateResult>(response.results().begin(), response.results().end());
}

Result<v1::QueryBestResponse> Client::QueryBest(const std::string& kernel,
                                                const v1::Problem& problem,
                                                const std::string& device_class,
                                                v1::NotFoundReason* not_found_reason) {
  v1::QueryBestRequest request;
  request.set_kernel(kernel);
  *request.mutable_problem() = problem;
  request.set_device_class(device_class);
  TF_ASSIGN_OR_RETURN(v1::QueryBestResponse response,
                      Call(&v1::TuneFleet::Stub::QueryBest, request));
  // The coordinator says why, naming what the kernel is tuned for.
  if (!response.found()) {
    if (not_found_reason) *not_found_reason = response.not_found_reason();
    return Status::NotFound(response.not_found());
  }
  return response;
}

Result<std::vector<v1::WorkerInfo>> Client::ListWorkers() {
  TF_ASSIGN_OR_RETURN(v1::ListWorkersResponse response,
                      Call(&v1::TuneFleet::Stub::ListWorkers, v1::ListWorkersRequest()));
  return std::vector<v1::WorkerInfo>(response.workers().begin(), response.workers().end());
}

Result<v1::CreateTokenResponse> Client::CreateToken(const std::string& name, v1::Role role) {
  v1::CreateTokenRequest request;
  request.set_name(name);
  request.set_role(role);
  return Call(&v1::TuneFleet::Stub::CreateToken, request);
}

Result<std::vector<v1::TokenInfo>> Client::ListTokens() {
  TF_ASSIGN_OR_RETURN(v1::ListTokensResponse response,
                      Call(&v1::TuneFleet::Stub::ListTokens, v1::ListTokensRequest()));
  return std::vector<v1::TokenInfo>(response.tokens().begin(), response.tokens().end());
}

Result<v1::TokenInfo> Client::RevokeToken(int64_t token_id) {
  v1::RevokeTokenRequest request;
  request.set_token_id(token_id);
  return Call(&v1::TuneFleet::Stub::RevokeToken, request);
}

Result<v1::SetKernelOwnerResponse> Client::SetKernelOwner(const std::string& kernel,
                                                          const std::string& team) {
  v1::SetKernelOwnerRequest request;
  request.set_kernel(kernel);
  request.set_team(team);
  return Call(&v1::TuneFleet::Stub::SetKernelOwner, request);
}

}  // namespace tf::client
