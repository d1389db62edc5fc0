#include "auth/bearer.h"

#include <strings.h>

namespace tf::auth {
namespace {

constexpr std::string_view kHeader = "authorization";  // gRPC keys are lowercase
constexpr std::string_view kScheme = "Bearer ";

}  // namespace

void AttachToken(grpc::ClientContext& context, const std::string& token) {
  if (!token.empty()) context.AddMetadata(std::string(kHeader), std::string(kScheme) + token);
}

Result<Caller> Gate::Check(const grpc::ServerContextBase& context, Rpc rpc) const {
  const auto& metadata = context.client_metadata();
  auto header = metadata.find(grpc::string_ref(kHeader.data(), kHeader.size()));
  if (header == metadata.end()) return CheckHeader(std::nullopt, rpc);
  return CheckHeader(std::string_view(header->second.data(), header->second.size()), rpc);
}

Result<Caller> Gate::CheckHeader(std::optional<std::string_view> authorization, Rpc rpc) const {
  if (!authorization) {
    if (allow_anonymous_) return Caller();
    // Read by CLI, Python and dashboard users alike: each way to give one.
    return Status::Unauthenticated(
        "no bearer token: " + std::string(RpcName(rpc)) +
        " needs one (tunefleet --token-file, TUNEFLEET_TOKEN_FILE or TUNEFLEET_TOKEN for the CLI "
        "and Python, an Authorization: Bearer header over HTTP)");
  }
  std::string_view value = *authorization;
  // The scheme is case-insensitive (RFC 9110, 11.1): "bearer" is as good.
  if (value.size() < kScheme.size() ||
      strncasecmp(value.data(), kScheme.data(), kScheme.size()) != 0) {
    return Status::Unauthenticated("the authorization header is not 'Bearer <token>'");
  }
  value.remove_prefix(kScheme.size());
  TF_ASSIGN_OR_RETURN(Caller caller, tokens_.Authenticate(value));
  return Authorize(caller, rpc);
}

}  // namespace tf::auth
