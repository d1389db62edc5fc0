// What every client of a coordinator shares (Client, ResultsClient): the
// channels' settings, and gRPC statuses turned into tf::Status with the
// coordinator's own message ("cannot reach coordinator at ADDRESS: ...").
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <string>

#include "client/client.h"
#include "common/status.h"

namespace tf::client {

// Message sizes; reconnection at most 1 s apart (found as it succeeds, since
// CoordinatorChannels polls connecting channels); keepalive pings every 2 s
// while a call is in flight, so that a coordinator that stops answering fails
// it within 5 s (a watch's quiet stream too).
grpc::ChannelArguments CoordinatorChannelArgs();

// The channels to `address` (several, comma-separated) with options.tls; a
// call_timeout_s that is not positive is InvalidArgument.
Result<std::unique_ptr<CoordinatorChannels>> ConnectCoordinator(const std::string& address,
                                                                const ClientOptions& options);

// A unary call's deadline (options.call_timeout_s from now) and bearer token.
void PrepareCall(const ClientOptions& options, grpc::ClientContext* context);

// How long a call waits for one of several coordinator addresses to connect
// (CoordinatorChannels::Pick).
std::chrono::milliseconds ChannelWait(double call_timeout_s);

// A call's status as a Status; an unreachable or silent coordinator named
// by `address`, and a plaintext client whose connection the server closed
// told that the coordinator may serve TLS.
Status FromGrpcStatus(const grpc::Status& status, const std::string& address,
                      const ClientOptions& options);

}  // namespace tf::client
