#include "client/cli/cli_util.h"

#include <cstdio>

namespace tf::cli {

int ExitCodeFor(const Status& status) {
  switch (status.code()) {
    case Code::kOk:
      return kExitOk;
    case Code::kUnavailable:
    case Code::kDeadlineExceeded:
      return kExitUnreachable;
    case Code::kNotFound:
      return kExitNotFound;
    case Code::kInvalidArgument:
    case Code::kFailedPrecondition:
      return kExitUsage;
    default:
      return kExitJobFailed;
  }
}

int Fail(const Status& status) {
  std::fprintf(stderr, "tunefleet: %s\n", status.message().c_str());
  return ExitCodeFor(status);
}

int FailUsage(const Status& status) {
  Fail(status);
  return kExitUsage;
}

Result<std::unique_ptr<client::Client>> Connect(const GlobalOptions& global) {
  client::ClientOptions options;
  options.tls = global.tls;
  return client::Client::Connect(global.coordinator, options);
}

void PrintJson(const client::Json& json) { std::printf("%s\n", json.dump(2).c_str()); }

}  // namespace tf::cli
