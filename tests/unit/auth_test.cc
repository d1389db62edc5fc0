// Tokens, the token index, the token file and the policy table, which must
// be the one docs/security.md prints.
#include <google/protobuf/descriptor.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "auth/roles.h"
#include "auth/token_file.h"
#include "auth/token_index.h"
#include "auth/tokens.h"
#include "common/files.h"
#include "tests/test_util.h"
#include "tunefleet/v1/results.pb.h"
#include "tunefleet/v1/worker.pb.h"

namespace tf::auth {
namespace {

TEST(TokensTest, TextHasTheIdAndThirtyTwoRandomBytes) {
  std::set<std::string> seen;
  for (int i = 0; i < 100; ++i) {
    auto token = GenerateToken(7);
    ASSERT_TRUE(token.ok());
    EXPECT_TRUE(std::regex_match(*token, std::regex("tf_7_[0-9a-f]{64}"))) << *token;
    EXPECT_TRUE(seen.insert(*token).second) << "repeated: " << *token;
    EXPECT_EQ(*TokenId(*token), 7);
  }
}

TEST(TokensTest, OnlyTheHashIsKeptAndItIsNotTheToken) {
  auto token = GenerateToken(1);
  ASSERT_TRUE(token.ok());
  const std::string hash = HashToken(*token);
  EXPECT_EQ(hash, Sha256Hex(*token));
  EXPECT_EQ(hash.size(), 64u);
  EXPECT_NE(hash, *token);
  EXPECT_EQ(hash.find(token->substr(5)), std::string::npos);  // no part of the secret
  EXPECT_EQ(HashToken(*token), hash);
}

TEST(TokensTest, MalformedTextIsUnauthenticated) {
  for (const char* text : {"", "tf_", "tf_x_ab", "tf_0_ab", "tf_-3_ab", "tf_12", "xx_1_ab"}) {
    auto id = TokenId(text);
    ASSERT_FALSE(id.ok()) << text;
    EXPECT_EQ(id.status().code(), Code::kUnauthenticated) << text;
  }
  EXPECT_EQ(*TokenId("tf_12_secret"), 12);
}

TEST(TokensTest, TextThatCannotTravelInAHeaderIsNamedByPosition) {
  EXPECT_TRUE(CheckTokenText("tf_1_abc").ok());
  for (const char* text : {"tf_1\nabc", "tf_1 abc",
                           "tf_1\x7f"
                           "abc",
                           "tf_1\xc3\xa9"}) {
    Status status = CheckTokenText(text);
    EXPECT_EQ(status.code(), Code::kInvalidArgument) << text;
    EXPECT_NE(status.message().find("at character 5"), std::string::npos) << status.message();
    EXPECT_EQ(status.message().find("tf_1"), std::string::npos) << status.message();
  }
}

TEST(TokensTest, ConstantTimeEqualsIsEquality) {
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "ab"));
  EXPECT_TRUE(ConstantTimeEquals("", ""));
}

v1::TokenInfo Info(int64_t id, const std::string& name, v1::Role role) {
  v1::TokenInfo info;
  info.set_token_id(id);
  info.set_name(name);
  info.set_role(role);
  return info;
}

TEST(TokenIndexTest, AuthenticatesByHashAndRevocationIsImmediate) {
  TokenIndex index;
  EXPECT_EQ(index.NextId(), 1);
  const std::string reader = *GenerateToken(1), worker = *GenerateToken(2);
  index.Put(Info(1, "dash", v1::ROLE_READER), HashToken(reader));
  index.Put(Info(2, "gpu-3", v1::ROLE_WORKER), HashToken(worker));
  EXPECT_EQ(index.NextId(), 3);

  auto caller = index.Authenticate(reader);
  ASSERT_TRUE(caller.ok()) << caller.status().ToString();
  EXPECT_EQ(caller->token_id, 1);
  EXPECT_EQ(caller->role, v1::ROLE_READER);
  EXPECT_EQ(index.Authenticate(worker)->role, v1::ROLE_WORKER);

  // The right id with another secret, and an id never issued.
  for (const std::string& forged : {*GenerateToken(1), *GenerateToken(9)}) {
    auto refused = index.Authenticate(forged);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().code(), Code::kUnauthenticated);
    EXPECT_NE(refused.status().message().find("unknown token"), std::string::npos);
  }

  EXPECT_TRUE(index.Revoke(1, 1234));
  EXPECT_FALSE(index.Revoke(99, 1234));
  auto revoked = index.Authenticate(reader);
  ASSERT_FALSE(revoked.ok());
  EXPECT_EQ(revoked.status().code(), Code::kUnauthenticated);
  EXPECT_EQ(revoked.status().message(), "token 1 (dash) revoked");
  EXPECT_TRUE(index.Authenticate(worker).ok());

  auto listed = index.List();
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].token_id(), 1);
  EXPECT_EQ(listed[0].revoked_unix_ms(), 1234);
  EXPECT_EQ(index.Find(2).name(), "gpu-3");
  EXPECT_EQ(index.Find(5).token_id(), 0);
}

TEST(TokenFileTest, WrittenOwnerOnlyReadBackAndNeverOverwritten) {
  testing::TempDir dir;
  const std::string path = dir / "admin.token";
  ASSERT_TRUE(WriteTokenFile(path, "tf_1_abc").ok());
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_TRUE(CheckOwnerOnly(path).ok());
  EXPECT_EQ(*ReadTokenFile(path), "tf_1_abc");
  EXPECT_FALSE(WriteTokenFile(path, "tf_2_def").ok());
  EXPECT_EQ(*ReadTokenFile(path), "tf_1_abc");

  const std::string two_lines = dir / "two_lines.token";
  ASSERT_TRUE(WriteFileAtomic(two_lines, "# the reader's token\ntf_1_abc\n").ok());
  auto read = ReadTokenFile(two_lines);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().message().find(two_lines + ": the token has a space at character 2"), 0u)
      << read.status().message();

  chmod(path.c_str(), 0644);
  Status open = CheckOwnerOnly(path);
  EXPECT_EQ(open.code(), Code::kFailedPrecondition);
  EXPECT_NE(open.message().find("644"), std::string::npos) << open.message();
}

TEST(RolesTest, RefusalsNameTheRolesThatMay) {
  Caller reader;
  reader.token_id = 4;
  reader.role = v1::ROLE_READER;
  auto refused = Authorize(reader, Rpc::kSubmitJob);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Code::kPermissionDenied);
  EXPECT_EQ(refused.status().message(),
            "role 'reader' may not call SubmitJob; it needs submitter or admin");
  Caller worker = reader;
  worker.role = v1::ROLE_WORKER;
  EXPECT_EQ(Authorize(worker, Rpc::kGetJob).status().message(),
            "role 'worker' may not call GetJob; it needs reader, submitter or admin");

  Caller submitter = reader;
  submitter.role = v1::ROLE_SUBMITTER;
  EXPECT_TRUE(Authorize(submitter, Rpc::kCancelJob)->own_only);
  EXPECT_FALSE(Authorize(submitter, Rpc::kQueryBest)->own_only);
  EXPECT_FALSE(Authorize(reader, Rpc::kGetJob)->own_only);
}

TEST(RolesTest, RoleNamesRoundTrip) {
  for (v1::Role role : {v1::ROLE_READER, v1::ROLE_SUBMITTER, v1::ROLE_WORKER, v1::ROLE_ADMIN}) {
    EXPECT_EQ(*ParseRole(RoleName(role)), role);
  }
  EXPECT_EQ(ParseRole("root").status().code(), Code::kInvalidArgument);
}

// docs/security.md's table, row by row, is the code's: the doc cannot drift.
TEST(RolesTest, SecurityDocTableIsThePolicy) {
  std::ifstream doc(testing::SourcePath("docs/security.md"));
  ASSERT_TRUE(doc);
  const std::regex row(R"(\| `(\w+)` \| (\w+) \| (\w+) \| (\w+) \| (\w+) \|)");
  const std::map<std::string, Access> kCells = {
      {"no", Access::kNone}, {"own", Access::kOwn}, {"yes", Access::kAll}};
  const v1::Role kColumns[] = {v1::ROLE_READER, v1::ROLE_SUBMITTER, v1::ROLE_WORKER,
                               v1::ROLE_ADMIN};
  std::map<std::string, int> rows_seen;
  std::string line;
  while (std::getline(doc, line)) {
    std::smatch m;
    if (!std::regex_match(line, m, row)) continue;
    rows_seen[m[1]]++;
    int rpc = 0;
    while (rpc < kRpcCount && RpcName(static_cast<Rpc>(rpc)) != m[1]) ++rpc;
    ASSERT_LT(rpc, kRpcCount) << "the doc lists an RPC the code does not: " << line;
    for (int c = 0; c < 4; ++c) {
      ASSERT_TRUE(kCells.count(m[c + 2])) << line;
      EXPECT_EQ(kCells.at(m[c + 2]), AccessOf(static_cast<Rpc>(rpc), kColumns[c]))
          << m[1] << " for " << RoleName(kColumns[c]) << ": the doc says " << m[c + 2];
    }
  }
  for (int rpc = 0; rpc < kRpcCount; ++rpc) {
    EXPECT_EQ(rows_seen[RpcName(static_cast<Rpc>(rpc))], 1)
        << RpcName(static_cast<Rpc>(rpc)) << " must have exactly one row in docs/security.md";
  }
}

TEST(RolesTest, EveryRpcOfEveryServiceIsInThePolicy) {
  std::set<std::string> in_policy;
  for (int rpc = 0; rpc < kRpcCount; ++rpc) in_policy.insert(RpcName(static_cast<Rpc>(rpc)));
  std::set<std::string> in_proto;
  for (const auto* service :
       {v1::SubmitJobRequest::descriptor()->file()->FindServiceByName("TuneFleet"),
        v1::RegisterRequest::descriptor()->file()->FindServiceByName("WorkerService"),
        v1::ImportResultsRequest::descriptor()->file()->FindServiceByName("TuningResults")}) {
    ASSERT_NE(service, nullptr);
    for (int i = 0; i < service->method_count(); ++i) in_proto.insert(service->method(i)->name());
  }
  EXPECT_EQ(in_policy, in_proto);
}

}  // namespace
}  // namespace tf::auth
