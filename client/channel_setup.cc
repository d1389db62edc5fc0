#include "client/channel_setup.h"

#include <algorithm>
#include <string_view>

#include "auth/bearer.h"
#include "auth/tokens.h"
#include "common/grpc_status.h"
#include "common/number_text.h"

namespace tf::client {
namespace {

// Results of a large job and the sources of a submitted kernel can exceed
// gRPC's 4 MiB default.
constexpr int kMaxMessageBytes = 256 << 20;

// A standby takes over within a few seconds.
constexpr auto kTakeoverWait = std::chrono::seconds(5);

// What a mismatch of TLS between client and coordinator looks like, and what
// to do about it; empty for other failures.
std::string TlsHint(const std::string& message, bool plaintext_client) {
  auto says = [&](std::string_view text) { return message.find(text) != std::string::npos; };
  // What a TLS server does with a plaintext client's first bytes, and what a
  // stopped one does too.
  if (plaintext_client && says("Socket closed")) {
    return " (the coordinator closed the connection: it stopped, or it serves TLS and wants its "
           "CA with --tls-ca or TUNEFLEET_TLS_CA)";
  }
  // A plaintext server's answer to a TLS hello.
  if (says("wrong version number")) {
    return " (the coordinator does not serve TLS: one started with --plaintext takes clients "
           "without --tls-ca, on 127.0.0.1 only)";
  }
  if (says("certificate verify failed")) {
    return " (the coordinator's certificate is not signed by the CA of --tls-ca, or does not name "
           "this address)";
  }
  return "";
}

}  // namespace

// The one place the channels' settings are made.
grpc::ChannelArguments CoordinatorChannelArgs() {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxMessageBytes);
  args.SetMaxSendMessageSize(kMaxMessageBytes);
  // Connections to a restarted coordinator, or a standby that took over, are
  // tried at most a second apart, however long it was away (gRPC's own back-off
  // starts at 1 s and grows to two minutes), and found as they succeed since
  // CoordinatorChannels polls them. GRPC_ARG_MIN_RECONNECT_BACKOFF_MS
  // is, despite its name, how long one connection attempt may take: it stays
  // at gRPC's 20 s, since a handshake on a loaded machine or a long link may
  // need more than the 100 ms once set here.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  // A coordinator that holds the connection but answers nothing (stopped, a
  // half-open connection) fails the calls in flight within 5 s, a watch's
  // stream among them, which is otherwise quiet for as long as its job is:
  // pinged every 2 s while a call is in flight. gRPC would stop after two
  // pings without data sent; the coordinator permits pings this often.
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 2000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 3000);
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  return args;
}

Result<std::unique_ptr<CoordinatorChannels>> ConnectCoordinator(const std::string& address,
                                                                const ClientOptions& options) {
  if (options.call_timeout_s <= 0) {
    return Status::InvalidArgument("call_timeout_s must be positive, got " +
                                   std::to_string(options.call_timeout_s));
  }
  if (!options.token.empty()) TF_RETURN_IF_ERROR(auth::CheckTokenText(options.token));
  TF_ASSIGN_OR_RETURN(auto credentials, auth::MakeChannelCredentials(options.tls));
  return CoordinatorChannels::Make(address, credentials, CoordinatorChannelArgs());
}

void PrepareCall(const ClientOptions& options, grpc::ClientContext* context) {
  context->set_deadline(std::chrono::system_clock::now() +
                        std::chrono::duration_cast<std::chrono::system_clock::duration>(
                            std::chrono::duration<double>(options.call_timeout_s)));
  auth::AttachToken(*context, options.token);
}

std::chrono::milliseconds ChannelWait(double call_timeout_s) {
  return std::min<std::chrono::milliseconds>(
      kTakeoverWait, std::chrono::milliseconds(static_cast<int64_t>(call_timeout_s * 1000)));
}

Status FromGrpcStatus(const grpc::Status& status, const std::string& address,
                      const ClientOptions& options) {
  const Code code = CodeFromGrpc(status.error_code());
  switch (code) {
    case Code::kOk:
      return Status::Ok();
    case Code::kUnavailable:
      return Status::Unavailable("cannot reach coordinator at " + address + ": " +
                                 status.error_message() +
                                 TlsHint(status.error_message(), options.tls.ca_file.empty()));
    case Code::kDeadlineExceeded:
      return Status::DeadlineExceeded("coordinator at " + address + " did not answer within " +
                                      NumberText(options.call_timeout_s) + " s");
    default:
      return Status(code, status.error_message());
  }
}

}  // namespace tf::client
