#include "client/best_config_cache.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "client/best_export.h"
#include "common/files.h"
#include "coordinator/best_index.h"
#include "kernelspec/best_query.h"
#include "kernelspec/config.h"
#include "tests/test_util.h"

namespace tf::client {
namespace {

using namespace std::chrono_literals;

// A coordinator that knows one tuned kernel, "gemm", and counts how often it
// is asked. `refuse` answers every call with that code; `hold` keeps calls
// until it is cleared.
class CountingQueryBest final : public v1::TuneFleet::Service {
 public:
  grpc::Status QueryBest(grpc::ServerContext*, const v1::QueryBestRequest* request,
                         v1::QueryBestResponse* response) override {
    ++calls;
    while (hold) std::this_thread::sleep_for(1ms);
    if (refuse != grpc::StatusCode::OK) return grpc::Status(refuse.load(), "refused");
    if (request->kernel() != "gemm") {  // as the coordinator says it
      kernelspec::SetNotTuned(*request, {}, response);
      return grpc::Status::OK;
    }
    response->set_found(true);
    response->set_exact(true);
    response->set_kernel(request->kernel());
    *response->mutable_problem() = request->problem();
    response->set_device_class(request->device_class());
    *response->mutable_config() = *kernelspec::ParseConfigKey("BM=64,BN=128");
    response->mutable_timing()->set_median_ns(1234);
    return grpc::Status::OK;
  }

  std::atomic<int> calls{0};
  std::atomic<grpc::StatusCode> refuse{grpc::StatusCode::OK};
  std::atomic<bool> hold{false};
};

class BestConfigCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(port, 0);
    auto client = Client::Connect("127.0.0.1:" + std::to_string(port));
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    client_ = std::move(client).value();
  }
  void TearDown() override { server_->Shutdown(); }

  static v1::Problem Problem(const std::string& text) { return *kernelspec::ParseProblem(text); }

  CountingQueryBest service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<Client> client_;
};

TEST_F(BestConfigCacheTest, SecondLookupIsAnsweredFromMemory) {
  BestConfigCache cache(client_.get());
  BestConfigKey key("gemm", Problem("M=4096,N=4096,K=4096"), "cpu-test");

  Result<BestConfig> first = cache.Lookup(key);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(kernelspec::ConfigKey((*first)->config()), "BM=64,BN=128");
  EXPECT_EQ(service_.calls, 1);

  Result<BestConfig> second = cache.Lookup(key);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->get(), first->get());
  EXPECT_EQ(service_.calls, 1);
}

TEST_F(BestConfigCacheTest, ProblemVariableOrderDoesNotMatter) {
  BestConfigCache cache(client_.get());
  ASSERT_TRUE(cache.Lookup("gemm", Problem("M=1,N=2,K=3"), "").ok());
  Result<v1::QueryBestResponse> again = cache.Lookup("gemm", Problem("K=3,M=1,N=2"), "");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->timing().median_ns(), 1234);
  EXPECT_EQ(service_.calls, 1);
}

TEST_F(BestConfigCacheTest, DeviceClassesAreSeparateEntries) {
  BestConfigCache cache(client_.get());
  ASSERT_TRUE(cache.Lookup("gemm", Problem("M=1"), "a").ok());
  Result<v1::QueryBestResponse> b = cache.Lookup("gemm", Problem("M=1"), "b");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->device_class(), "b");
  EXPECT_EQ(service_.calls, 2);
}

TEST_F(BestConfigCacheTest, ExpiredEntryAsksAgain) {
  // Long enough that a loaded machine (CI's sanitized run) does not expire the
  // entry between the first two lookups.
  BestConfigCache cache(client_.get(), {.ttl = 1s});
  BestConfigKey key("gemm", Problem("M=8"), "");
  ASSERT_TRUE(cache.Lookup(key).ok());
  ASSERT_TRUE(cache.Lookup(key).ok());
  EXPECT_EQ(service_.calls, 1);
  std::this_thread::sleep_for(1100ms);
  ASSERT_TRUE(cache.Lookup(key).ok());
  EXPECT_EQ(service_.calls, 2);
}

TEST_F(BestConfigCacheTest, InvalidateAsksAgain) {
  BestConfigCache cache(client_.get());
  BestConfigKey key("gemm", Problem("M=8"), "");
  BestConfigKey other("gemm", Problem("M=9"), "");
  ASSERT_TRUE(cache.Lookup(key).ok());
  ASSERT_TRUE(cache.Lookup(other).ok());
  cache.Invalidate(key);
  ASSERT_TRUE(cache.Lookup(key).ok());
  ASSERT_TRUE(cache.Lookup(other).ok());
  EXPECT_EQ(service_.calls, 3);
  cache.InvalidateAll();
  ASSERT_TRUE(cache.Lookup(other).ok());
  EXPECT_EQ(service_.calls, 4);
}

TEST_F(BestConfigCacheTest, NotFoundIsCachedForItsOwnTtl) {
  BestConfigCache cache(client_.get(), {.ttl = 1h, .not_found_ttl = 1s});
  BestConfigKey key("never_tuned", Problem("M=8"), "");
  v1::NotFoundReason reason = v1::NOT_FOUND_REASON_UNSPECIFIED;
  Result<BestConfig> missing = cache.Lookup(key, &reason);
  EXPECT_EQ(missing.status().code(), Code::kNotFound);
  EXPECT_NE(missing.status().message().find("never_tuned"), std::string::npos);
  EXPECT_EQ(reason, v1::NOT_FOUND_REASON_NOT_TUNED);
  // From memory, with its reason.
  reason = v1::NOT_FOUND_REASON_UNSPECIFIED;
  EXPECT_EQ(cache.Lookup(key, &reason).status().code(), Code::kNotFound);
  EXPECT_EQ(reason, v1::NOT_FOUND_REASON_NOT_TUNED);
  EXPECT_EQ(service_.calls, 1);
  std::this_thread::sleep_for(1100ms);
  EXPECT_EQ(cache.Lookup(key).status().code(), Code::kNotFound);
  EXPECT_EQ(service_.calls, 2);
}

TEST_F(BestConfigCacheTest, AnUnreachableCoordinatorIsReported) {
  server_->Shutdown();
  BestConfigCache cache(client_.get(), {.unreachable_retry = 1s});
  BestConfigKey key("gemm", Problem("M=8"), "");
  for (int i = 0; i < 2; ++i) {
    Result<BestConfig> down = cache.Lookup(key);
    EXPECT_EQ(down.status().code(), Code::kUnavailable);
    EXPECT_NE(down.status().message().find("cannot reach coordinator at 127.0.0.1:"),
              std::string::npos)
        << down.status().message();
  }
}

// During an outage the last answer is served past its TTL, and the
// coordinator is asked again only after the retry time.
TEST_F(BestConfigCacheTest, AnOutageServesTheLastAnswerAndAsksOncePerRetry) {
  BestConfigCache cache(client_.get(), {.ttl = 0s, .unreachable_retry = 1h});
  BestConfigKey key("gemm", Problem("M=8"), "");
  BestConfigKey never_answered("gemm", Problem("M=9"), "");
  ASSERT_TRUE(cache.Lookup(key).ok());
  service_.refuse = grpc::StatusCode::UNAVAILABLE;
  for (int i = 0; i < 3; ++i) {
    Result<BestConfig> stale = cache.Lookup(key);
    ASSERT_TRUE(stale.ok()) << stale.status().ToString();
    EXPECT_EQ(kernelspec::ConfigKey((*stale)->config()), "BM=64,BN=128");
    EXPECT_EQ(cache.Lookup(never_answered).status().code(), Code::kUnavailable);
  }
  EXPECT_EQ(service_.calls, 3);  // the first answer, then one ask of each key

  // A refused token is the caller's to see at every lookup, never kept.
  cache.InvalidateAll();
  service_.refuse = grpc::StatusCode::UNAUTHENTICATED;
  EXPECT_EQ(cache.Lookup(key).status().code(), Code::kUnauthenticated);
  EXPECT_EQ(cache.Lookup(key).status().code(), Code::kUnauthenticated);
  EXPECT_EQ(service_.calls, 5);
}

// A coordinator that hangs stalls the one lookup that asks again; the others
// go on with the expired answer.
TEST_F(BestConfigCacheTest, AHungCoordinatorStallsOnlyTheLookupThatAsks) {
  BestConfigCache cache(client_.get(), {.ttl = 0s});
  BestConfigKey key("gemm", Problem("M=8"), "");
  ASSERT_TRUE(cache.Lookup(key).ok());
  service_.hold = true;
  std::thread asking([&] { EXPECT_TRUE(cache.Lookup(key).ok()); });
  while (service_.calls < 2) std::this_thread::sleep_for(1ms);
  for (int i = 0; i < 100; ++i) {
    Result<BestConfig> meanwhile = cache.Lookup(key);
    ASSERT_TRUE(meanwhile.ok()) << meanwhile.status().ToString();
  }
  EXPECT_EQ(service_.calls, 2);
  service_.hold = false;
  asking.join();
}

// What finds nothing, the coordinator's index and an exported file of its
// entries (as `tunefleet export` writes it) find nothing for the same reason
// and say the same, so that an application can tell a kernel not tuned yet
// (its fallback's quiet case) from a misspelt variable or device class.
TEST(BestConfigCacheOffline, FindsNothingForTheReasonTheCoordinatorGives) {
  coordinator::BestIndex index;
  auto tune = [&](const std::string& kernel, const std::string& fingerprint, int64_t created,
                  const std::string& problem, const std::string& device_class, bool complete) {
    db::BestRow row;
    row.kernel = kernel;
    row.fingerprint = fingerprint;
    row.fingerprint_created_ms = created;
    row.problem_key = kernelspec::ProblemKey(*kernelspec::ParseProblem(problem));
    row.device_class = device_class;
    row.result.config_key = "BM=16";
    row.result.timing.set_median_ns(100);
    index.Put(row);
    if (complete) index.Complete({kernel, fingerprint, created, device_class});
  };
  // gpu/c's tuning is of a newer source, with a variable K more.
  tune("gemm", "fp", 1, "M=64,N=64", "gpu/a", true);
  tune("gemm", "fp", 1, "M=64,N=64", "gpu/b", true);
  tune("gemm", "fp2", 2, "K=8,M=64,N=64", "gpu/c", true);
  tune("unfinished", "fp", 1, "M=64", "gpu/a", false);  // its tuning has not completed
  testing::TempDir dir;
  ASSERT_TRUE(WriteFileAtomic(dir / "best.json", ExportJson("gemm", index.List("gemm", ""))).ok());
  auto offline = BestConfigCache::Offline(dir / "best.json");
  ASSERT_TRUE(offline.ok()) << offline.status().ToString();

  struct Case {
    std::string kernel, problem, device_class;
    v1::NotFoundReason reason;
    std::string says;  // how the sentence ends
  };
  const Case cases[] = {
      {"conv", "M=64,N=64", "", v1::NOT_FOUND_REASON_NOT_TUNED, ""},
      {"unfinished", "M=64", "gpu/a", v1::NOT_FOUND_REASON_NOT_TUNED, ""},
      {"gemn", "M=64,N=64", "", v1::NOT_FOUND_REASON_NOT_TUNED,
       "; tuned kernels of a similar name: gemm"},
      {"gemm", "M=64,n=64", "", v1::NOT_FOUND_REASON_OTHER_VARIABLES,
       "; its tuned problems have the variables K,M,N or M,N"},
      {"gemm", "M=64,n=64", "gpu/a", v1::NOT_FOUND_REASON_OTHER_VARIABLES,
       "; its tuned problems have the variables K,M,N or M,N"},
      {"gemm", "M=64,N=64", "gpu/x", v1::NOT_FOUND_REASON_OTHER_DEVICE_CLASS,
       "; it is tuned on gpu/a, gpu/b, gpu/c"},
      {"gemm", "M=64,N=64", "gpu/c", v1::NOT_FOUND_REASON_OTHER_VARIABLES,
       "; its tuned problems on device class 'gpu/c' have the variables K,M,N"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.kernel + " " + c.problem + " on '" + c.device_class + "'");
    v1::QueryBestRequest request;
    request.set_kernel(c.kernel);
    *request.mutable_problem() = *kernelspec::ParseProblem(c.problem);
    request.set_device_class(c.device_class);
    v1::QueryBestResponse online = index.Query(request);
    EXPECT_FALSE(online.found());
    EXPECT_EQ(online.not_found_reason(), c.reason);
    const std::string prefix = kernelspec::ExplainNotTuned(request, {}).message;
    EXPECT_EQ(online.not_found(), prefix + c.says);

    v1::NotFoundReason reason = v1::NOT_FOUND_REASON_UNSPECIFIED;
    auto answer = (*offline)->Lookup(c.kernel, request.problem(), c.device_class, &reason);
    EXPECT_EQ(answer.status().code(), Code::kNotFound);
    EXPECT_EQ(reason, c.reason);
    EXPECT_EQ(answer.status().message(), prefix + " in the exported file" + c.says);
  }
  // Found: no reason.
  v1::NotFoundReason reason = v1::NOT_FOUND_REASON_UNSPECIFIED;
  EXPECT_TRUE(
      (*offline)->Lookup("gemm", *kernelspec::ParseProblem("M=64,N=64"), "gpu/a", &reason).ok());
  EXPECT_EQ(reason, v1::NOT_FOUND_REASON_UNSPECIFIED);
}

// An exported file that is not one is refused naming the file and the field.
TEST(BestConfigCacheOffline, BadExportFileNamesTheFileAndTheField) {
  auto dir = MakeTempDir("tf-offline");
  ASSERT_TRUE(dir.ok());
  const std::string path = *dir + "/best.json";
  ASSERT_TRUE(WriteFileAtomic(path, R"({"format": "tunefleet-best-configs/1", "kernel": "gemm",
    "entries": [{"device_class": "d", "problem": {"M": 64}, "config": {"BM": 1.5},
                 "median_ns": 10}]})")
                  .ok());
  auto cache = BestConfigCache::Offline(path);
  ASSERT_FALSE(cache.ok());
  EXPECT_EQ(cache.status().message(),
            path + ": entries[0].config.BM: neither an integer nor a string");
  auto missing = BestConfigCache::Offline(*dir + "/none.json");
  EXPECT_FALSE(missing.ok());
  std::filesystem::remove_all(*dir);
}

}  // namespace
}  // namespace tf::client
