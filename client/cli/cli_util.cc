#include "client/cli/cli_util.h"

#include <cstdio>
#include <cstdlib>

#include "auth/token_file.h"
#include "auth/tokens.h"

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
    case Code::kUnauthenticated:
    case Code::kPermissionDenied:
      return kExitAuth;
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

int FailSpec(const kernelspec::LoadedSpec& loaded, const Status& status) {
  return FailUsage(Status::InvalidArgument(kernelspec::LocateErrors(loaded, status.message())));
}

Result<client::ClientOptions> ClientOptionsFor(const GlobalOptions& global) {
  client::ClientOptions options;
  options.tls = global.tls;
  if (!global.token_file.empty()) {
    auto token = auth::ReadTokenFile(global.token_file);
    if (!token.ok()) {
      // Name where the path came from: a TUNEFLEET_TOKEN_FILE exported long ago
      // is easy to forget when no --token-file was typed.
      const char* from_env = std::getenv("TUNEFLEET_TOKEN_FILE");
      const std::string source = from_env != nullptr && global.token_file == from_env
                                     ? "TUNEFLEET_TOKEN_FILE"
                                     : "--token-file";
      return Status::InvalidArgument(source + ": " + token.status().message());
    }
    options.token = *token;
  } else if (const char* token = std::getenv("TUNEFLEET_TOKEN"); token && *token) {
    if (Status valid = auth::CheckTokenText(token); !valid.ok()) {
      return Status::InvalidArgument("TUNEFLEET_TOKEN: " + valid.message());
    }
    options.token = token;
  }
  return options;
}

Result<std::unique_ptr<client::Client>> Connect(const GlobalOptions& global) {
  TF_ASSIGN_OR_RETURN(client::ClientOptions options, ClientOptionsFor(global));
  return client::Client::Connect(global.coordinator, options);
}

void PrintJson(const client::Json& json) { std::printf("%s\n", json.dump(2).c_str()); }

}  // namespace tf::cli
