// Counts every RPC of the coordinator's gRPC server by service, method and
// status code into Metrics, as a server interceptor: the services
// themselves are untouched. Install with
//   builder.experimental().SetInterceptorCreators(RpcMetricsInterceptors(metrics));
#pragma once

#include <grpcpp/support/server_interceptor.h>

#include <memory>
#include <vector>

#include "web/metrics.h"

namespace tf::web {

// The gRPC name of a status code, "OK", "INVALID_ARGUMENT", ...
const char* GrpcCodeName(grpc::StatusCode code);

std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
RpcMetricsInterceptors(Metrics& metrics);

}  // namespace tf::web
