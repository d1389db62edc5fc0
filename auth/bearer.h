// Bearer tokens on the wire: the "authorization: Bearer <token>" header of
// every call. The client side attaches it; the server side (Gate) finds the
// caller it stands for and checks the RPC against the policy table.
#pragma once

#include <grpcpp/grpcpp.h>

#include <optional>
#include <string>
#include <string_view>

#include "auth/roles.h"
#include "auth/token_index.h"

namespace tf::auth {

// Adds the header to one call; nothing when `token` is empty.
void AttachToken(grpc::ClientContext& context, const std::string& token);

class Gate {
 public:
  // `allow_anonymous`: a call without a token gets every right (a
  // coordinator started with --allow-anonymous). A call with a token is
  // checked either way.
  Gate(const TokenIndex& tokens, bool allow_anonymous)
      : tokens_(tokens), allow_anonymous_(allow_anonymous) {}

  // The caller, allowed to make `rpc`; kUnauthenticated when the token is
  // missing, unknown or revoked, kPermissionDenied when its role may not.
  Result<Caller> Check(const grpc::ServerContextBase& context, Rpc rpc) const;
  // The same for the value of an authorization header (HTTP's, for the
  // dashboard); nullopt: the request has none.
  Result<Caller> CheckHeader(std::optional<std::string_view> authorization, Rpc rpc) const;

 private:
  const TokenIndex& tokens_;
  const bool allow_anonymous_;
};

}  // namespace tf::auth
