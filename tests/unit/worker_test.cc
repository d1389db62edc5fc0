// The worker daemon against an in-test coordinator (a real gRPC server on
// localhost): registration retried until answered, artifacts fetched and
// hash-checked, leases run in the real runner, results reported despite
// failed deliveries, each exactly once.
#include "worker/worker.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <condition_variable>
#include <filesystem>
#include <map>
#include <thread>

#include "common/files.h"
#include "common/subprocess.h"

namespace tf::worker {
namespace {

constexpr const char* kKernelSource = R"(
#include <cstdint>
static int* volatile null_pointer = nullptr;
extern "C" void tf_reference(void* const* b, const int64_t* s) {
  for (int64_t i = 0; i < s[0]; ++i) static_cast<float*>(b[1])[i] = 2 * static_cast<const float*>(b[0])[i];
}
extern "C" void good(void* const* b, const int64_t* s) { tf_reference(b, s); }
extern "C" void crash(void* const*, const int64_t*) { *null_pointer = 1; }
)";

class FakeCoordinator final : public v1::WorkerService::Service {
 public:
  explicit FakeCoordinator(std::string artifact) : artifact_(std::move(artifact)) {
    sha_ = Sha256Hex(artifact_);
  }

  grpc::Status Register(grpc::ServerContext*, const v1::RegisterRequest* request,
                        v1::RegisterResponse* response) override {
    std::lock_guard lock(mu_);
    if (++register_calls_ <= 2) return {grpc::StatusCode::UNAVAILABLE, "starting up"};
    registered_ = *request;
    response->set_worker_id("w1");
    response->set_heartbeat_interval_ms(100);
    return grpc::Status::OK;
  }

  grpc::Status Heartbeat(grpc::ServerContext*, const v1::HeartbeatRequest*,
                         v1::HeartbeatResponse*) override {
    return grpc::Status::OK;
  }

  grpc::Status AcquireLease(grpc::ServerContext*, const v1::AcquireLeaseRequest* request,
                            v1::AcquireLeaseResponse* response) override {
    std::lock_guard lock(mu_);
    EXPECT_EQ(request->worker_id(), "w1");
    if (leases_given_ == 2) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      return grpc::Status::OK;  // no work
    }
    v1::Lease& lease = *response->mutable_lease();
    lease.set_lease_id(++leases_given_);
    // Lease 2 names an artifact the coordinator can only send corrupted.
    lease.set_artifact_sha256(lease.lease_id() == 1 ? sha_ : std::string(64, 'a'));
    lease.set_reference_symbol("tf_reference");
    v1::KernelSpec& spec = *lease.mutable_spec();
    spec.add_scalars("N");
    for (const char* name : {"X", "Y"}) {
      v1::Buffer* buffer = spec.add_buffers();
      buffer->set_name(name);
      buffer->set_dtype("f32");
      buffer->set_count("N");
      buffer->set_output(std::string(name) == "Y");
    }
    spec.mutable_benchmark()->set_min_repeats(2);
    spec.mutable_benchmark()->set_timeout_s(5);
    int64_t id = lease.lease_id() * 10;
    for (const char* symbol : {"good", "crash", "good"}) {
      v1::LeasedCandidate* c = lease.add_candidates();
      c->set_candidate_id(++id);
      c->set_symbol(symbol);
      v1::ProblemVar* var = c->mutable_problem()->add_vars();
      var->set_name("N");
      var->set_value(1000);
    }
    return grpc::Status::OK;
  }

  grpc::Status ReportResults(grpc::ServerContext*, const v1::ReportResultsRequest* request,
                             v1::ReportResultsResponse* response) override {
    std::lock_guard lock(mu_);
    if (++report_calls_ == 1) return {grpc::StatusCode::UNAVAILABLE, "restarting"};
    for (const auto& r : request->results()) {
      EXPECT_TRUE(results_.emplace(r.candidate_id(), r).second) << "twice: " << r.candidate_id();
    }
    response->set_recorded(request->results_size());
    if (request->lease_finished()) finished_leases_.insert(request->lease_id());
    changed_.notify_all();
    return grpc::Status::OK;
  }

  grpc::Status FetchArtifact(grpc::ServerContext*, const v1::FetchArtifactRequest* request,
                             grpc::ServerWriter<v1::ArtifactChunk>* writer) override {
    std::string bytes = artifact_;
    {
      std::lock_guard lock(mu_);
      // The first download of the real artifact arrives corrupted, as does
      // every download of the other one.
      if (request->sha256() != sha_ || ++fetches_of_real_artifact_ == 1) bytes[100] ^= 1;
    }
    for (size_t offset = 0; offset < bytes.size(); offset += 4096) {
      v1::ArtifactChunk chunk;
      chunk.set_data(bytes.substr(offset, 4096));
      chunk.set_total_size(bytes.size());
      writer->Write(chunk);
    }
    return grpc::Status::OK;
  }

  bool WaitForFinishedLeases(size_t count) {
    std::unique_lock lock(mu_);
    return changed_.wait_for(lock, std::chrono::seconds(30),
                             [&] { return finished_leases_.size() >= count; });
  }

  std::mutex mu_;
  std::condition_variable changed_;
  std::string artifact_, sha_;
  int register_calls_ = 0, report_calls_ = 0, leases_given_ = 0, fetches_of_real_artifact_ = 0;
  v1::RegisterRequest registered_;
  std::map<int64_t, v1::CandidateResult> results_;
  std::set<int64_t> finished_leases_;
};

TEST(WorkerTest, RunsLeasesFromACoordinatorAndReportsEveryResultOnce) {
  const std::string dir =
      std::filesystem::temp_directory_path() / ("worker_test_" + std::to_string(getpid()));
  ASSERT_TRUE(MakeDirs(dir).ok());
  ASSERT_TRUE(WriteFileAtomic(dir + "/kernel.cpp", kKernelSource).ok());
  auto built = RunProcess(
      {"g++", "-O1", "-shared", "-fPIC", "-o", dir + "/kernel.so", dir + "/kernel.cpp"}, {});
  ASSERT_TRUE(built.ok() && built->success()) << (built.ok() ? built->output : "");
  auto artifact = ReadFile(dir + "/kernel.so");
  ASSERT_TRUE(artifact.ok());

  FakeCoordinator coordinator(*artifact);
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&coordinator);
  auto server = builder.BuildAndStart();
  ASSERT_NE(port, 0);

  WorkerOptions options;
  options.coordinator = "127.0.0.1:" + std::to_string(port);
  options.cache_dir = dir + "/cache";
  options.runner_path = TF_BINARY_DIR "/bin/tunefleet-runner";
  options.label = "test";
  auto worker = Worker::Create(options);
  ASSERT_TRUE(worker.ok()) << worker.status().ToString();
  Status run_status;
  std::thread run([&] { run_status = (*worker)->Run(); });
  const bool finished = coordinator.WaitForFinishedLeases(2);
  (*worker)->Shutdown();
  run.join();
  server->Shutdown();
  ASSERT_TRUE(finished) << "the worker did not finish both leases";
  EXPECT_TRUE(run_status.ok()) << run_status.ToString();

  std::lock_guard lock(coordinator.mu_);
  EXPECT_EQ(coordinator.register_calls_, 3);
  ASSERT_EQ(coordinator.registered_.devices_size(), 1);
  EXPECT_EQ(coordinator.registered_.devices(0).labels(0), "test");
  // Lease 1: refetched once after a corrupted download, then run.
  EXPECT_EQ(coordinator.fetches_of_real_artifact_, 2);
  EXPECT_TRUE(std::filesystem::exists(options.cache_dir + "/" + coordinator.sha_));
  auto& results = coordinator.results_;
  ASSERT_EQ(results.size(), 6u);
  EXPECT_EQ(results[11].status(), v1::RESULT_STATUS_OK) << results[11].error();
  EXPECT_EQ(results[12].status(), v1::RESULT_STATUS_RUNTIME_FAILED);
  EXPECT_NE(results[12].error().find("SIGSEGV"), std::string::npos);
  EXPECT_EQ(results[13].status(), v1::RESULT_STATUS_OK) << results[13].error();
  // Lease 2: its artifact never arrives intact, so nothing of it runs.
  for (int64_t id : {21, 22, 23}) {
    EXPECT_EQ(results[id].status(), v1::RESULT_STATUS_RUNTIME_FAILED);
    EXPECT_NE(results[id].error().find("artifact hash mismatch"), std::string::npos)
        << results[id].error();
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tf::worker
