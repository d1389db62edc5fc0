// Identity and roles against a real coordinator over 127.0.0.1 and a real
// SQLite file: every RPC called by every kind of caller is allowed or refused
// as the policy table (auth/roles.cc, docs/security.md) says, with the code
// and message that say what is missing; revocation takes effect on the next
// call; a worker token cannot touch another token's workers or leases; a
// token's jobs in flight are limited.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include "auth/bearer.h"
#include "auth/token_file.h"
#include "auth/tokens.h"
#include "common/files.h"
#include "tests/test_util.h"
#include "tests/token_coordinator_fixture.h"
#include "tunefleet/v1/results.grpc.pb.h"
#include "tunefleet/v1/worker.grpc.pb.h"

namespace tf::testing {
namespace {

namespace v1 = ::tunefleet::v1;
using auth::Access;
using auth::Rpc;
using std::chrono::seconds;

class RolesTest : public TokenCoordinatorTest {
 protected:
  void SetUp() override { StartCoordinator({"--max-jobs-in-flight-per-token", "3"}); }

  grpc::Status Revoke(const std::string& token) {
    v1::RevokeTokenRequest request;
    request.set_token_id(*auth::TokenId(token));
    v1::TokenInfo info;
    return clients_->RevokeToken(Context(admin_).get(), request, &info);
  }

  grpc::Status Cancel(const std::string& token, int64_t job_id) {
    v1::GetJobRequest request;
    request.set_job_id(job_id);
    v1::Job job;
    return clients_->CancelJob(Context(token).get(), request, &job);
  }

  // A worker whose one device matches no job (vendor "none"), or the slow
  // spec's CPU target.
  grpc::Status Register(const std::string& token, std::string* worker_id, bool cpu = false,
                        const std::string& previous = "") {
    v1::RegisterRequest request;
    request.set_hostname("roles-test");
    request.set_previous_worker_id(previous);
    auto* device = request.add_devices();
    device->set_vendor(cpu ? "cpu" : "none");
    device->set_arch(cpu ? "host" : "none");
    device->set_device_class(cpu ? "cpu-roles" : "none-roles");
    v1::RegisterResponse response;
    grpc::Status status = workers_->Register(Context(token).get(), request, &response);
    if (worker_id) *worker_id = response.worker_id();
    return status;
  }

  grpc::Status Acquire(const std::string& token, const std::string& worker_id, int64_t wait_ms,
                       v1::AcquireLeaseResponse* response) {
    v1::AcquireLeaseRequest request;
    request.set_worker_id(worker_id);
    request.set_wait_ms(wait_ms);
    return workers_->AcquireLease(Context(token).get(), request, response);
  }

  grpc::Status Heartbeat(const std::string& token, const std::string& worker_id) {
    v1::HeartbeatRequest request;
    request.set_worker_id(worker_id);
    v1::HeartbeatResponse response;
    return workers_->Heartbeat(Context(token).get(), request, &response);
  }

  // Calls `rpc` as the holder of `token`, on `job_id` (a cancelled job) and
  // `worker_id` where it names one.
  grpc::Status Call(Rpc rpc, const std::string& token, int64_t job_id,
                    const std::string& worker_id) {
    auto context = Context(token);
    v1::GetJobRequest job_request;
    job_request.set_job_id(job_id);
    v1::Job job;
    switch (rpc) {
      case Rpc::kSubmitJob:
        return Submit(token);
      case Rpc::kGetJob:
        return clients_->GetJob(context.get(), job_request, &job);
      case Rpc::kWatchJob: {
        auto reader = clients_->WatchJob(context.get(), job_request);
        v1::JobEvent event;
        while (reader->Read(&event)) {
        }
        return reader->Finish();
      }
      case Rpc::kCancelJob:
        return clients_->CancelJob(context.get(), job_request, &job);
      case Rpc::kListJobs: {
        v1::ListJobsResponse response;
        return clients_->ListJobs(context.get(), v1::ListJobsRequest(), &response);
      }
      case Rpc::kListResults: {
        v1::ListResultsResponse response;
        return clients_->ListResults(context.get(), job_request, &response);
      }
      case Rpc::kQueryBest: {
        v1::QueryBestRequest request;
        request.set_kernel("spin");
        auto* var = request.mutable_problem()->add_vars();
        var->set_name("n");
        var->set_value(1024);
        v1::QueryBestResponse response;
        return clients_->QueryBest(context.get(), request, &response);
      }
      case Rpc::kListWorkers: {
        v1::ListWorkersResponse response;
        return clients_->ListWorkers(context.get(), v1::ListWorkersRequest(), &response);
      }
      case Rpc::kCreateToken: {
        v1::CreateTokenRequest request;
        request.set_name("made-in-matrix");
        request.set_role(v1::ROLE_READER);
        v1::CreateTokenResponse response;
        return clients_->CreateToken(context.get(), request, &response);
      }
      case Rpc::kListTokens: {
        v1::ListTokensResponse response;
        return clients_->ListTokens(context.get(), v1::ListTokensRequest(), &response);
      }
      case Rpc::kRevokeToken: {
        v1::RevokeTokenRequest request;
        request.set_token_id(*auth::TokenId(spare_));
        v1::TokenInfo response;
        return clients_->RevokeToken(context.get(), request, &response);
      }
      case Rpc::kSetKernelOwner: {
        // The submitter's kernel name, to the submitter's team: it stays theirs.
        v1::SetKernelOwnerRequest request;
        request.set_kernel("spin");
        request.set_team("submitter");
        v1::SetKernelOwnerResponse response;
        return clients_->SetKernelOwner(context.get(), request, &response);
      }
      case Rpc::kImportResults: {
        v1::ImportResultsRequest request;
        request.set_kernel("spin");
        request.set_device_class("recorded-roles");
        auto* var = request.mutable_problem()->add_vars();
        var->set_name("n");
        var->set_value(1024);
        auto* result = request.add_results();
        auto* setting = result->mutable_config()->add_settings();
        setting->set_name("unroll");
        setting->mutable_value()->set_int_value(1);
        result->set_status(v1::RESULT_STATUS_OK);
        result->mutable_timing()->set_median_ns(1000);
        v1::ImportResultsResponse response;
        return results_->ImportResults(context.get(), request, &response);
      }
      case Rpc::kListBest: {
        v1::ListBestRequest request;
        request.set_kernel("spin");
        v1::ListBestResponse response;
        return results_->ListBest(context.get(), request, &response);
      }
      case Rpc::kListKernels: {
        v1::ListKernelsResponse response;
        return results_->ListKernels(context.get(), v1::ListKernelsRequest(), &response);
      }
      case Rpc::kRegister:
        return Register(token, nullptr);
      case Rpc::kHeartbeat:
        return Heartbeat(token, worker_id);
      case Rpc::kAcquireLease: {
        v1::AcquireLeaseResponse response;
        return Acquire(token, worker_id, 0, &response);
      }
      case Rpc::kReportResults: {
        v1::ReportResultsResponse response;
        return Report(token, worker_id, v1::Lease(), 1000, &response);
      }
      case Rpc::kFetchArtifact: {
        v1::FetchArtifactRequest request;
        request.set_sha256(std::string(64, '0'));
        auto reader = workers_->FetchArtifact(context.get(), request);
        v1::ArtifactChunk chunk;
        while (reader->Read(&chunk)) {
        }
        return reader->Finish();
      }
    }
    return grpc::Status(grpc::StatusCode::INTERNAL, "no such rpc");
  }

  std::string spare_;  // revoked by the matrix's RevokeToken calls
};

TEST_F(RolesTest, EveryRpcForEveryCallerIsAsTheTableSays) {
  const std::string reader = CreateToken(v1::ROLE_READER, "reader");
  const std::string submitter = CreateToken(v1::ROLE_SUBMITTER, "submitter");
  const std::string other_submitter = CreateToken(v1::ROLE_SUBMITTER, "other-submitter");
  const std::string worker = CreateToken(v1::ROLE_WORKER, "worker");
  const std::string other_worker = CreateToken(v1::ROLE_WORKER, "other-worker");
  const std::string revoked = CreateToken(v1::ROLE_ADMIN, "revoked");
  spare_ = CreateToken(v1::ROLE_READER, "spare");
  ASSERT_TRUE(Revoke(revoked).ok());

  // The submitter's job (cancelled, so that WatchJob ends) and the worker's
  // worker: what "own" calls name.
  int64_t job_id = 0;
  ASSERT_TRUE(Submit(submitter, &job_id).ok());
  ASSERT_TRUE(Cancel(submitter, job_id).ok());
  std::string worker_id;
  ASSERT_TRUE(Register(worker, &worker_id).ok());

  struct Who {
    const char* name;
    std::string token;
    v1::Role role;  // ROLE_UNSPECIFIED: not authenticated
    bool owner;     // of the job and the worker the calls name
    const char* refusal;
  };
  const std::vector<Who> callers = {
      {"no token", "", v1::ROLE_UNSPECIFIED, false, "no bearer token"},
      {"unknown token", *auth::GenerateToken(999), v1::ROLE_UNSPECIFIED, false, "unknown token"},
      {"revoked token", revoked, v1::ROLE_UNSPECIFIED, false, "revoked"},
      {"reader", reader, v1::ROLE_READER, false, "may not call"},
      {"submitter", submitter, v1::ROLE_SUBMITTER, true, "may not call"},
      {"other submitter", other_submitter, v1::ROLE_SUBMITTER, false, "may not call"},
      {"worker", worker, v1::ROLE_WORKER, true, "may not call"},
      {"other worker", other_worker, v1::ROLE_WORKER, false, "may not call"},
      {"admin", admin_, v1::ROLE_ADMIN, true, "may not call"},
  };
  for (int r = 0; r < auth::kRpcCount; ++r) {
    const Rpc rpc = static_cast<Rpc>(r);
    for (const Who& who : callers) {
      SCOPED_TRACE(std::string(auth::RpcName(rpc)) + " as " + who.name);
      grpc::Status status = Call(rpc, who.token, job_id, worker_id);
      if (who.role == v1::ROLE_UNSPECIFIED) {
        EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << status.error_message();
        EXPECT_NE(status.error_message().find(who.refusal), std::string::npos)
            << status.error_message();
        continue;
      }
      const Access access = auth::AccessOf(rpc, who.role);
      // Listing one's own jobs and registering a new worker need no owner.
      const bool names_something = rpc != Rpc::kListJobs && rpc != Rpc::kRegister;
      if (access == Access::kNone) {
        EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED)
            << status.error_message();
        EXPECT_NE(status.error_message().find("role '" + std::string(auth::RoleName(who.role)) +
                                              "' may not call " + auth::RpcName(rpc)),
                  std::string::npos)
            << status.error_message();
      } else if (access == Access::kOwn && names_something && !who.owner) {
        EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED)
            << status.error_message();
        EXPECT_NE(status.error_message().find("belongs to another token"), std::string::npos)
            << status.error_message();
      } else if (rpc == Rpc::kFetchArtifact) {
        // Allowed: the artifact does not exist.
        EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND) << status.error_message();
      } else {
        EXPECT_TRUE(status.ok()) << status.error_code() << ": " << status.error_message();
      }
    }
  }
}

TEST_F(RolesTest, ASubmitterListsOnlyItsOwnJobs) {
  const std::string mine = CreateToken(v1::ROLE_SUBMITTER, "mine");
  const std::string theirs = CreateToken(v1::ROLE_SUBMITTER, "theirs");
  const std::string reader = CreateToken(v1::ROLE_READER, "reader");
  int64_t my_job = 0, their_job = 0;
  ASSERT_TRUE(Submit(mine, &my_job).ok());
  ASSERT_TRUE(Submit(theirs, &their_job, "theirs").ok());
  auto list = [&](const std::string& token) {
    v1::ListJobsResponse response;
    EXPECT_TRUE(clients_->ListJobs(Context(token).get(), v1::ListJobsRequest(), &response).ok());
    std::vector<int64_t> ids;
    for (const auto& job : response.jobs()) ids.push_back(job.job_id());
    return ids;
  };
  EXPECT_EQ(list(mine), std::vector<int64_t>{my_job});
  EXPECT_EQ(list(theirs), std::vector<int64_t>{their_job});
  EXPECT_EQ(list(reader), (std::vector<int64_t>{their_job, my_job}));
}

// A name is shown in `token list` and the log: a line break in it would
// forge a row of either.
TEST_F(RolesTest, ATokenNameIsOneShortLine) {
  v1::ListTokensResponse before, after;
  ASSERT_TRUE(clients_->ListTokens(Context(admin_).get(), {}, &before).ok());
  v1::CreateTokenRequest request;
  request.set_role(v1::ROLE_READER);
  v1::CreateTokenResponse response;
  for (const std::string& name :
       {std::string("evil\n7  admin"), std::string("tab\there"), std::string(129, 'x')}) {
    request.set_name(name);
    grpc::Status refused = clients_->CreateToken(Context(admin_).get(), request, &response);
    EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << name;
  }
  ASSERT_TRUE(clients_->ListTokens(Context(admin_).get(), {}, &after).ok());
  EXPECT_EQ(after.tokens_size(), before.tokens_size());
  EXPECT_FALSE(CreateToken(v1::ROLE_READER, std::string(128, 'x')).empty());
  EXPECT_FALSE(CreateToken(v1::ROLE_READER, "Zoë's laptop").empty());
}

TEST_F(RolesTest, ARevokedTokenFailsOnItsVeryNextCall) {
  const std::string token = CreateToken(v1::ROLE_SUBMITTER, "soon-revoked");
  v1::ListJobsResponse response;
  ASSERT_TRUE(clients_->ListJobs(Context(token).get(), v1::ListJobsRequest(), &response).ok());
  ASSERT_TRUE(Revoke(token).ok());
  grpc::Status refused = clients_->ListJobs(Context(token).get(), v1::ListJobsRequest(), &response);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_NE(refused.error_message().find("soon-revoked) revoked"), std::string::npos)
      << refused.error_message();
  // Also across a restart: the revocation is in the database.
  RestartCoordinator();
  refused = clients_->ListJobs(Context(token).get(), v1::ListJobsRequest(), &response);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_TRUE(clients_->ListJobs(Context(admin_).get(), v1::ListJobsRequest(), &response).ok());
}

// A watch is one call that lasts: it ends when its token is revoked, rather
// than following the job for as long as it runs (the job here waits for a
// device that never comes; the call's deadline is 30 s).
TEST_F(RolesTest, ARevokedTokensWatchEnds) {
  const std::string token = CreateToken(v1::ROLE_SUBMITTER, "watcher");
  int64_t job_id = 0;
  ASSERT_TRUE(Submit(token, &job_id).ok());
  v1::GetJobRequest request;
  request.set_job_id(job_id);
  auto context = Context(token);
  auto watch = clients_->WatchJob(context.get(), request);
  v1::JobEvent event;
  ASSERT_TRUE(watch->Read(&event));
  EXPECT_EQ(event.job().state(), v1::JOB_STATE_QUEUED);
  ASSERT_TRUE(Revoke(token).ok());
  while (watch->Read(&event)) {
  }
  grpc::Status ended = watch->Finish();
  EXPECT_EQ(ended.error_code(), grpc::StatusCode::UNAUTHENTICATED) << ended.error_message();
  EXPECT_NE(ended.error_message().find("watcher) revoked"), std::string::npos)
      << ended.error_message();
}

TEST_F(RolesTest, AWorkerTokenCannotTouchAnotherTokensWorkersOrLeases) {
  const std::string first = CreateToken(v1::ROLE_WORKER, "first");
  const std::string second = CreateToken(v1::ROLE_WORKER, "second");
  const std::string submitter = CreateToken(v1::ROLE_SUBMITTER, "submitter");
  std::string first_id, second_id;
  ASSERT_TRUE(Register(first, &first_id, /*cpu=*/true).ok());
  ASSERT_TRUE(Register(second, &second_id, /*cpu=*/true).ok());
  ASSERT_TRUE(Submit(submitter).ok());

  // The first worker's lease, once the job's two configurations are built.
  v1::AcquireLeaseResponse leased;
  ASSERT_TRUE(WaitFor(
      [&] {
        grpc::Status status = Acquire(first, first_id, 1000, &leased);
        EXPECT_TRUE(status.ok()) << status.error_message();
        return leased.has_lease();
      },
      seconds(120)))
      << coordinator_->Log();
  const v1::Lease& lease = leased.lease();

  v1::AcquireLeaseResponse none;
  grpc::Status status = Acquire(second, first_id, 0, &none);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(status.error_message(), "worker " + first_id + " belongs to another token");
  status = Heartbeat(second, first_id);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  // Nor take the first worker's id by registering under it.
  status = Register(second, nullptr, true, first_id);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);

  v1::ReportResultsResponse reported;
  // Under the first worker's id, or under its own: refused, nothing recorded.
  status = Report(second, first_id, lease, 1000, &reported);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  status = Report(second, second_id, lease, 1000, &reported);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_NE(status.error_message().find("was not leased to worker " + second_id), std::string::npos)
      << status.error_message();

  // The first worker's own report counts.
  status = Report(first, first_id, lease, 1000, &reported);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(reported.recorded(), lease.candidates_size());
  EXPECT_TRUE(Heartbeat(first, first_id).ok());
}

// An admin may take over a worker's id; the worker daemon, refused its next
// heartbeat, registers under a new id of its own token.
TEST_F(RolesTest, AWorkerDaemonDisownedOfItsIdRegistersAnew) {
  const std::string token = CreateToken(v1::ROLE_WORKER, "daemon");
  ASSERT_TRUE(auth::WriteTokenFile(dir_ / "worker.token", token).ok());
  auto daemon = StartWorker(coordinator_->address(), dir_.path(), "daemon", "cpu:1",
                            {"--token-file", dir_ / "worker.token"});
  auto worker_ids = [&] {
    v1::ListWorkersResponse response;
    EXPECT_TRUE(
        clients_->ListWorkers(Context(admin_).get(), v1::ListWorkersRequest(), &response).ok());
    std::vector<std::string> ids;
    for (const auto& w : response.workers()) ids.push_back(w.worker_id());
    return ids;
  };
  ASSERT_TRUE(WaitFor([&] { return worker_ids().size() == 1; }, seconds(30))) << daemon->Log();
  const std::string first_id = worker_ids()[0];
  ASSERT_TRUE(Register(admin_, nullptr, /*cpu=*/false, first_id).ok());
  EXPECT_TRUE(WaitFor([&] { return worker_ids().size() == 2; }, seconds(30))) << daemon->Log();
  EXPECT_NE(daemon->Log().find("belongs to another token"), std::string::npos) << daemon->Log();
}

// A worker daemon whose token the coordinator refuses stops with exit code 5
// and the refusal in its log, at its first registration (a submitter's token)
// and when its token is revoked while it runs; no retry would change either.
TEST_F(RolesTest, AWorkerDaemonRefusedItsTokenExits5) {
  auto exit_code = [](Process& daemon) {
    int wait_status = 0;
    if (!WaitFor([&] { return daemon.Exited(&wait_status); }, seconds(30))) return -1;
    return WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1;
  };
  ASSERT_TRUE(
      auth::WriteTokenFile(dir_ / "submitter.token", CreateToken(v1::ROLE_SUBMITTER, "me")).ok());
  auto submitter = StartWorker(coordinator_->address(), dir_.path(), "submitter", "cpu:1",
                               {"--token-file", dir_ / "submitter.token"});
  EXPECT_EQ(exit_code(*submitter), 5) << submitter->Log();
  EXPECT_NE(submitter->Log().find("role 'submitter' may not call Register"), std::string::npos)
      << submitter->Log();

  const std::string token = CreateToken(v1::ROLE_WORKER, "soon-revoked");
  ASSERT_TRUE(auth::WriteTokenFile(dir_ / "worker.token", token).ok());
  auto daemon = StartWorker(coordinator_->address(), dir_.path(), "daemon", "cpu:1",
                            {"--token-file", dir_ / "worker.token"});
  ASSERT_TRUE(WaitFor([&] { return daemon->Log().find("registered with") != std::string::npos; },
                      seconds(30)))
      << daemon->Log();
  ASSERT_TRUE(Revoke(token).ok());
  EXPECT_EQ(exit_code(*daemon), 5) << daemon->Log();
  EXPECT_NE(daemon->Log().find("soon-revoked) revoked"), std::string::npos) << daemon->Log();
}

TEST_F(RolesTest, JobsInFlightAreLimitedPerToken) {
  const std::string busy = CreateToken(v1::ROLE_SUBMITTER, "busy");
  const std::string other = CreateToken(v1::ROLE_SUBMITTER, "other");
  int64_t first = 0;
  ASSERT_TRUE(Submit(busy, &first).ok());
  ASSERT_TRUE(Submit(busy).ok());
  ASSERT_TRUE(Submit(busy).ok());
  grpc::Status refused = Submit(busy);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(refused.error_message().find("--max-jobs-in-flight-per-token 3"), std::string::npos)
      << refused.error_message();
  EXPECT_TRUE(Submit(other, nullptr, "other").ok());  // another token's jobs do not count
  ASSERT_TRUE(Cancel(busy, first).ok());
  EXPECT_TRUE(Submit(busy).ok());
}

// A kernel's best configuration answers for whoever tunes it, so a name is
// its first submitter's team (a token name): a submitter token of another
// name is refused it, before and after a restart and after the owner's
// revocation, and a new token of the owner's name may submit it; admins may
// submit under any name and take none.
TEST_F(RolesTest, AKernelNameBelongsToTheFirstSubmitterTokensName) {
  const std::string first = CreateToken(v1::ROLE_SUBMITTER, "first");
  const std::string second = CreateToken(v1::ROLE_SUBMITTER, "second");
  auto expect_refused = [&](const std::string& token, const std::string& kernel) {
    SCOPED_TRACE(kernel);
    grpc::Status refused = Submit(token, nullptr, kernel);
    EXPECT_EQ(refused.error_code(), grpc::StatusCode::PERMISSION_DENIED);
    EXPECT_NE(refused.error_message().find("kernel '" + kernel + "' belongs to another token"),
              std::string::npos)
        << refused.error_message();
  };
  ASSERT_TRUE(Submit(first, nullptr, "shared_name").ok());
  expect_refused(second, "shared_name");
  EXPECT_TRUE(Submit(second, nullptr, "second_name").ok());
  expect_refused(first, "second_name");
  EXPECT_TRUE(Submit(admin_, nullptr, "shared_name").ok());
  ASSERT_TRUE(Submit(admin_, nullptr, "admin_name").ok());
  EXPECT_TRUE(Submit(second, nullptr, "admin_name").ok());  // the admin took none

  RestartCoordinator();
  expect_refused(second, "shared_name");
  expect_refused(first, "admin_name");
  grpc::Status owner = Submit(first, nullptr, "shared_name");
  EXPECT_TRUE(owner.ok()) << owner.error_message();
  ASSERT_TRUE(Revoke(first).ok());
  expect_refused(second, "shared_name");
  const std::string renewed = CreateToken(v1::ROLE_SUBMITTER, "first");  // a rotated token
  EXPECT_TRUE(Submit(renewed, nullptr, "shared_name").ok());
  expect_refused(renewed, "second_name");
}

// `tunefleet kernels set-owner` hands a kernel name to another team, or to
// no one, printing the change; it is refused, changing nothing, to a
// submitter or worker token, for a name with no job, for a team no submitter
// token is named, and with both or neither of TEAM and --none.
TEST_F(RolesTest, TheCommandLineHandsAKernelNameOn) {
  const std::string admin_file = dir_ / "admin.token";
  const std::string first = CreateToken(v1::ROLE_SUBMITTER, "first");
  const std::string second = CreateToken(v1::ROLE_SUBMITTER, "second");
  const std::string worker = CreateToken(v1::ROLE_WORKER, "worker");
  ASSERT_TRUE(Submit(first, nullptr, "handed").ok());
  auto set_owner = [&](const std::string& token_file, std::vector<std::string> args) {
    args.insert(args.begin(), {"--token-file", token_file, "kernels", "set-owner", "handed"});
    return RunCli(coordinator_->address(), args);
  };
  auto expect_refused = [&](const std::string& token, const std::string& who) {
    SCOPED_TRACE(who);
    grpc::Status refused = Submit(token, nullptr, "handed");
    EXPECT_EQ(refused.error_code(), grpc::StatusCode::PERMISSION_DENIED) << refused.error_message();
  };

  for (const auto& [token, role] : {std::pair(first, "submitter"), std::pair(worker, "worker")}) {
    const std::string file = dir_ / (std::string(role) + ".token");
    ASSERT_TRUE(auth::WriteTokenFile(file, token).ok());
    auto refused = set_owner(file, {"second"});
    EXPECT_EQ(refused.exit_code, 5) << refused.output;
    EXPECT_NE(refused.output.find("role '" + std::string(role) + "' may not call SetKernelOwner"),
              std::string::npos)
        << refused.output;
  }
  struct Refusal {
    std::vector<std::string> args;
    int exit_code;
    std::string says;
  };
  const std::vector<Refusal> refusals = {
      {{"second", "--none"}, 2, "give TEAM or --none, not both"},
      {{}, 2, "give the TEAM to hand handed to, or --none for no one"},
      {{"nobody"}, 4, "no submitter token in force is named 'nobody'"},
      {{"worker"}, 4, "no submitter token in force is named 'worker'"},
      {{"second", "--device-class", "x"}, 2, "--device-class"},
  };
  for (const Refusal& r : refusals) {
    auto refused = set_owner(admin_file, r.args);
    EXPECT_EQ(refused.exit_code, r.exit_code) << refused.output;
    EXPECT_NE(refused.output.find(r.says), std::string::npos) << refused.output;
  }
  auto unknown = RunCli(coordinator_->address(), {"--token-file", admin_file, "kernels",
                                                  "set-owner", "never_submitted", "second"});
  EXPECT_EQ(unknown.exit_code, 4) << unknown.output;
  EXPECT_NE(unknown.output.find("no job or import is under kernel name 'never_submitted'"),
            std::string::npos)
      << unknown.output;
  expect_refused(second, "second, before");

  auto handed = set_owner(admin_file, {"second"});
  ASSERT_EQ(handed.exit_code, 0) << handed.output;
  EXPECT_EQ(handed.output, "handed: owner first -> second\n");
  expect_refused(first, "first");
  EXPECT_TRUE(Submit(second, nullptr, "handed").ok());

  auto released = set_owner(admin_file, {"--none", "--json"});
  ASSERT_EQ(released.exit_code, 0) << released.output;
  EXPECT_EQ(nlohmann::json::parse(released.output),
            (nlohmann::json{{"kernel", "handed"}, {"previous_owner", "second"}, {"owner", ""}}));
  EXPECT_TRUE(Submit(first, nullptr, "handed").ok());  // the next to submit takes it
  RestartCoordinator();
  expect_refused(second, "second, after a restart");
  handed = set_owner(admin_file, {"second"});
  EXPECT_EQ(handed.output, "handed: owner first -> second\n");

  // The listing is still `kernels`: nothing is tuned here.
  auto listed = RunCli(coordinator_->address(), {"--token-file", admin_file, "kernels"});
  EXPECT_EQ(listed.exit_code, 4) << listed.output;
  EXPECT_NE(listed.output.find("no kernel is tuned on any device class"), std::string::npos)
      << listed.output;
}

TEST_F(RolesTest, TheCommandLineManagesTokensAndExits5WhenRefused) {
  const std::string admin_file = dir_ / "admin.token";
  auto created = RunCli(coordinator_->address(), {"--token-file", admin_file, "token", "create",
                                                  "--role", "reader", "--name", "dash", "--json"});
  ASSERT_EQ(created.exit_code, 0) << created.output;
  const std::string reader_file = dir_ / "reader.token";
  const auto json = nlohmann::json::parse(created.output.substr(created.output.find('{')));
  const std::string token = json["token"];
  ASSERT_TRUE(auth::WriteTokenFile(reader_file, token).ok());

  auto listed = RunCli(coordinator_->address(), {"--token-file", admin_file, "token", "list"});
  ASSERT_EQ(listed.exit_code, 0) << listed.output;
  EXPECT_NE(listed.output.find("dash"), std::string::npos) << listed.output;
  EXPECT_EQ(listed.output.find(token.substr(5)), std::string::npos) << "a secret was listed";

  auto jobs = RunCli(coordinator_->address(), {"--token-file", reader_file, "jobs"});
  EXPECT_EQ(jobs.exit_code, 0) << jobs.output;
  auto refused = RunCli(coordinator_->address(), {"--token-file", reader_file, "cancel", "1"});
  EXPECT_EQ(refused.exit_code, 5) << refused.output;
  EXPECT_NE(refused.output.find("role 'reader' may not call CancelJob"), std::string::npos)
      << refused.output;
  auto anonymous = RunCli(coordinator_->address(), {"jobs"});
  EXPECT_EQ(anonymous.exit_code, 5) << anonymous.output;
  EXPECT_NE(anonymous.output.find("no bearer token"), std::string::npos) << anonymous.output;

  auto revoked = RunCli(coordinator_->address(), {"--token-file", admin_file, "token", "revoke",
                                                  std::to_string(*auth::TokenId(token))});
  EXPECT_EQ(revoked.exit_code, 0) << revoked.output;
  jobs = RunCli(coordinator_->address(), {"--token-file", reader_file, "jobs"});
  EXPECT_EQ(jobs.exit_code, 5) << jobs.output;

  // The coordinator's own admin token stays: it would not start again.
  const std::string admin_id = std::to_string(*auth::TokenId(*auth::ReadTokenFile(admin_file)));
  revoked =
      RunCli(coordinator_->address(), {"--token-file", admin_file, "token", "revoke", admin_id});
  EXPECT_NE(revoked.exit_code, 0) << revoked.output;
  EXPECT_NE(
      revoked.output.find("token " + admin_id + " is the coordinator's --admin-token-file token"),
      std::string::npos)
      << revoked.output;
  listed = RunCli(coordinator_->address(), {"--token-file", admin_file, "token", "list"});
  EXPECT_EQ(listed.exit_code, 0) << listed.output;
}

// A token made elsewhere for a new database is taken only with a secret as
// long as a guess cannot reach (tf_1_x was adopted as the admin).
TEST_F(RolesTest, AWeakAdminTokenFileStopsTheStart) {
  TempDir other;
  const std::string weak = other / "admin.token";
  ASSERT_TRUE(WriteFileAtomic(weak, "tf_1_x\n").ok());
  ASSERT_EQ(chmod(weak.c_str(), 0600), 0);
  auto started = RunProcess(
      {BinaryPath("bin/tunefleet-coordinator"), "--plaintext", "--listen", "127.0.0.1:0", "--db",
       other / "tf.db", "--artifacts", other / "artifacts", "--admin-token-file", weak},
      WithTimeout(30));
  ASSERT_TRUE(started.ok());
  EXPECT_NE(started->exit_code, 0);
  EXPECT_NE(started->output.find("the admin token file's secret has 1 characters; an admin token "
                                 "made elsewhere needs at least 32"),
            std::string::npos)
      << started->output;
}

TEST_F(RolesTest, AnAdminTokenFileOthersCanReadStopsTheStart) {
  coordinator_->Kill();
  const std::string admin_file = dir_ / "admin.token";
  ASSERT_EQ(chmod(admin_file.c_str(), 0644), 0);
  auto started = RunProcess({BinaryPath("bin/tunefleet-coordinator"), "--plaintext", "--listen",
                             "127.0.0.1:0", "--db", coordinator_->db_path(), "--artifacts",
                             dir_ / "artifacts", "--admin-token-file", admin_file},
                            WithTimeout(30));
  ASSERT_TRUE(started.ok());
  EXPECT_EQ(started->exit_code, 2);
  EXPECT_NE(started->output.find("has mode 644"), std::string::npos) << started->output;
  // Private again, the same token still works after a restart.
  ASSERT_EQ(chmod(admin_file.c_str(), 0600), 0);
  coordinator_->Start();
  v1::ListTokensResponse tokens;
  grpc::Status listed;
  ASSERT_TRUE(WaitFor(
      [&] {
        listed = clients_->ListTokens(Context(admin_).get(), v1::ListTokensRequest(), &tokens);
        return listed.error_code() != grpc::StatusCode::UNAVAILABLE;
      },
      seconds(10)));
  EXPECT_TRUE(listed.ok()) << listed.error_message();
}

}  // namespace
}  // namespace tf::testing
