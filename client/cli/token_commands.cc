// `tunefleet token create|list|revoke`: the coordinator's bearer tokens,
// managed with an admin token.
#include <cstdio>

#include "auth/roles.h"
#include "client/cli/cli_util.h"
#include "client/cli/commands.h"
#include "client/cli/text_format.h"

namespace tf::cli {

using client::Json;

int RunTokenCreate(const GlobalOptions& global, const TokenCreateOptions& options) {
  Result<v1::Role> role = auth::ParseRole(options.role);
  if (!role.ok()) return FailUsage(role.status());
  auto client = Connect(global);
  if (!client.ok()) return Fail(client.status());
  auto created = (*client)->CreateToken(options.name, *role);
  if (!created.ok()) return Fail(created.status());
  if (global.json) {
    Json out = client::TokenJson(created->info());
    out["token"] = created->token();
    PrintJson(out);
    return kExitOk;
  }
  std::printf("%s\n", created->token().c_str());
  std::fprintf(stderr,
               "token %lld (%s, role %s) created; it is shown this once: keep it in a file "
               "readable by you only and pass --token-file\n",
               static_cast<long long>(created->info().token_id()), created->info().name().c_str(),
               auth::RoleName(created->info().role()));
  return kExitOk;
}

int RunTokenList(const GlobalOptions& global) {
  auto client = Connect(global);
  if (!client.ok()) return Fail(client.status());
  auto tokens = (*client)->ListTokens();
  if (!tokens.ok()) return Fail(tokens.status());
  if (global.json) {
    Json out = Json::array();
    for (const v1::TokenInfo& token : *tokens) out.push_back(client::TokenJson(token));
    PrintJson(out);
    return kExitOk;
  }
  Table table({"ID", "NAME", "ROLE", "CREATED", "REVOKED"});
  for (const v1::TokenInfo& token : *tokens) {
    table.AddRow({std::to_string(token.token_id()), token.name(), auth::RoleName(token.role()),
                  FormatTime(token.created_unix_ms()), FormatTime(token.revoked_unix_ms())});
  }
  table.Print(stdout);
  return kExitOk;
}

int RunTokenRevoke(const GlobalOptions& global, int64_t token_id) {
  auto client = Connect(global);
  if (!client.ok()) return Fail(client.status());
  auto revoked = (*client)->RevokeToken(token_id);
  if (!revoked.ok()) return Fail(revoked.status());
  if (global.json) {
    PrintJson(client::TokenJson(*revoked));
    return kExitOk;
  }
  // The time tells a revocation now from an earlier one (revoking again changes nothing).
  std::printf("token %lld (%s) revoked at %s\n", static_cast<long long>(token_id),
              revoked->name().c_str(), FormatTime(revoked->revoked_unix_ms()).c_str());
  return kExitOk;
}

}  // namespace tf::cli
