// tf::Status across gRPC: the one mapping of codes both ways, for the
// coordinator's services (scheduler/) and their callers (client/, worker/).
// Header-only, so that tf_common itself needs no gRPC: only components that
// link gRPC include it.
#pragma once

#include <grpcpp/support/status.h>

#include "common/status.h"

namespace tf {

inline grpc::StatusCode ToGrpcCode(Code code) {
  switch (code) {
    case Code::kOk:
      return grpc::StatusCode::OK;
    case Code::kInvalidArgument:
      return grpc::StatusCode::INVALID_ARGUMENT;
    case Code::kNotFound:
      return grpc::StatusCode::NOT_FOUND;
    case Code::kAlreadyExists:
      return grpc::StatusCode::ALREADY_EXISTS;
    case Code::kFailedPrecondition:
      return grpc::StatusCode::FAILED_PRECONDITION;
    case Code::kResourceExhausted:
      return grpc::StatusCode::RESOURCE_EXHAUSTED;
    case Code::kUnavailable:
      return grpc::StatusCode::UNAVAILABLE;
    case Code::kDeadlineExceeded:
      return grpc::StatusCode::DEADLINE_EXCEEDED;
    case Code::kCancelled:
      return grpc::StatusCode::CANCELLED;
    case Code::kPermissionDenied:
      return grpc::StatusCode::PERMISSION_DENIED;
    case Code::kUnauthenticated:
      return grpc::StatusCode::UNAUTHENTICATED;
    case Code::kInternal:
      return grpc::StatusCode::INTERNAL;
  }
  return grpc::StatusCode::INTERNAL;
}

// gRPC codes with no counterpart (UNKNOWN, DATA_LOSS, ...) become kInternal.
inline Code CodeFromGrpc(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return Code::kOk;
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::OUT_OF_RANGE:
      return Code::kInvalidArgument;
    case grpc::StatusCode::NOT_FOUND:
      return Code::kNotFound;
    case grpc::StatusCode::ALREADY_EXISTS:
      return Code::kAlreadyExists;
    case grpc::StatusCode::FAILED_PRECONDITION:
      return Code::kFailedPrecondition;
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return Code::kResourceExhausted;
    case grpc::StatusCode::UNAVAILABLE:
      return Code::kUnavailable;
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return Code::kDeadlineExceeded;
    case grpc::StatusCode::CANCELLED:
      return Code::kCancelled;
    case grpc::StatusCode::PERMISSION_DENIED:
      return Code::kPermissionDenied;
    case grpc::StatusCode::UNAUTHENTICATED:
      return Code::kUnauthenticated;
    default:
      return Code::kInternal;
  }
}

inline grpc::Status ToGrpcStatus(const Status& status) {
  return grpc::Status(ToGrpcCode(status.code()), status.message());
}

}  // namespace tf
