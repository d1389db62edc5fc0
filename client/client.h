// Client: the C++ API of a TuneFleet coordinator. Every call returns a
// tf::Status carrying the coordinator's own message; a coordinator that cannot
// be reached reads "cannot reach coordinator at ADDRESS: ...". Thread-safe:
// one Client may serve many threads.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "auth/tls.h"
#include "client/coordinator_channels.h"
#include "common/status.h"
#include "tunefleet/v1/tunefleet.grpc.pb.h"

namespace tf::client {

namespace v1 = ::tunefleet::v1;

struct ClientOptions {
  // Deadline of every call except WatchJob, which lasts as long as the job.
  double call_timeout_s = 30;
  auth::ClientTls tls;  // no CA: plaintext
  std::string token;    // bearer token sent with every call; empty: none
  // How long WatchJob keeps reconnecting to a coordinator that went away
  // (restarted, network lost) before it gives up.
  double watch_reconnect_s = 600;
};

class Client {
 public:
  // `address`: HOST:PORT, or several separated by commas, blanks around each
  // ignored (a coordinator and its standbys: each call goes to the one that
  // serves, CoordinatorChannels).
  // Fails on a malformed address; does not wait for the coordinator, so the
  // first call reports an unreachable one.
  static Result<std::unique_ptr<Client>> Connect(const std::string& address,
                                                 ClientOptions options = {});

  const std::string& address() const { return channels_->addresses(); }

  Result<v1::Job> Submit(const v1::KernelSpec& spec, const std::vector<v1::SourceFile>& sources,
                         int priority);
  Result<v1::Job> GetJob(int64_t job_id);
  // Calls on_update with every state the coordinator streams and returns the
  // final one. When the stream breaks before the job ends, reconnects with
  // back-off and carries on where it stood, calling on_lost (when given) once
  // per outage; fails when the coordinator stays away, or connected answers
  // nothing, for watch_reconnect_s ("did not answer"), or refuses the watch.
  // One that stops answering mid-watch (stopped, a half-open connection) is
  // found by keepalive pings within 5 s (CoordinatorChannelArgs).
  Result<v1::Job> WatchJob(int64_t job_id, const std::function<void(const v1::Job&)>& on_update,
                           const std::function<void(const Status&)>& on_lost = {});
  Result<v1::Job> Cancel(int64_t job_id);
  // Most recent first; limit 0 lets the coordinator choose.
  Result<std::vector<v1::Job>> ListJobs(int limit);
  // Every candidate's result, best first.
  Result<std::vector<v1::CandidateResult>> ListResults(int64_t job_id);
  // The best tuned configuration, or the nearest tuned problem's (exact ==
  // false). An empty device_class matches any. Code::kNotFound when nothing of
  // the kernel was tuned on a matching device, in the coordinator's words
  // (QueryBestResponse.not_found: what the kernel is tuned for), and then
  // *not_found_reason, when given, says which way (NOT_TUNED, or a query
  // that names other variables or device class than the kernel is tuned
  // for); kInvalidArgument for no kernel, no variables or one given twice.
  Result<v1::QueryBestResponse> QueryBest(const std::string& kernel, const v1::Problem& problem,
                                          const std::string& device_class,
                                          v1::NotFoundReason* not_found_reason = nullptr);
  Result<std::vector<v1::WorkerInfo>> ListWorkers();

  // Tokens (admin only). CreateToken's response holds the token's text,
  // which the coordinator never shows again.
  Result<v1::CreateTokenResponse> CreateToken(const std::string& name, v1::Role role);
  Result<std::vector<v1::TokenInfo>> ListTokens();
  Result<v1::TokenInfo> RevokeToken(int64_t token_id);
  // Admin only: hands a kernel name to `team` (a submitter token's name), or
  // to no one when `team` is empty.
  Result<v1::SetKernelOwnerResponse> SetKernelOwner(const std::string& kernel,
                                                    const std::string& team);

 private:
  Client(std::unique_ptr<CoordinatorChannels> channels, ClientOptions options)
      : options_(std::move(options)), channels_(std::move(channels)) {}
  // A stub on the channel of the coordinator that serves now.
  std::unique_ptr<v1::TuneFleet::Stub> Stub();

  // One unary call with the configured deadline.
  template <typename Request, typename Response>
  Result<Response> Call(grpc::Status (v1::TuneFleet::Stub::*method)(grpc::ClientContext*,
                                                                    const Request&, Response*),
                        const Request& request);
  Status FromGrpc(const grpc::Status& status) const;

  ClientOptions options_;
  std::unique_ptr<CoordinatorChannels> channels_;
};

}  // namespace tf::client
