// What every client of a coordinator shares (Client, ResultsClient): the
// channels' settings, and gRPC statuses turned into tf::Status with the
// coordinator's own message ("cannot reach coordinator at ADDRESS: ...").
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <string>

#include "common/status.h"

namespace tf::client {

grpc::ChannelArguments CoordinatorChannelArgs();

// How long a call waits for one of several coordinator addresses to connect
// (CoordinatorChannels::Pick).
std::chrono::milliseconds ChannelWait(double call_timeout_s);

Status FromGrpcStatus(const grpc::Status& status, const std::string& address,
                      double call_timeout_s);

}  // namespace tf::client
