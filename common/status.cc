#include "common/status.h"

namespace tf {

const char* CodeName(Code code) {
  switch (code) {
    case Code::kOk:
      return "OK";
    case Code::kInvalidArgument:
      return "INVALID_ARGUMENT";
    case Code::kNotFound:
      return "NOT_FOUND";
    case Code::kAlreadyExists:
      return "ALREADY_EXISTS";
    case Code::kFailedPrecondition:
      return "FAILED_PRECONDITION";
    case Code::kResourceExhausted:
      return "RESOURCE_EXHAUSTED";
    case Code::kUnavailable:
      return "UNAVAILABLE";
    case Code::kDeadlineExceeded:
      return "DEADLINE_EXCEEDED";
    case Code::kCancelled:
      return "CANCELLED";
    case Code::kPermissionDenied:
      return "PERMISSION_DENIED";
    case Code::kUnauthenticated:
      return "UNAUTHENTICATED";
    case Code::kInternal:
      return "INTERNAL";
  }
  return "UNKNOWN";
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(CodeName(code_)) + ": " + message_;
}

}  // namespace tf
