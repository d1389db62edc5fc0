// Best-config queries: QueryBest over loopback gRPC from concurrent clients
// (throughput, p50/p99 latency), against a real coordinator on a seeded
// tuning database; and the client's in-process cached lookup. Every query
// carries a reader's bearer token, checked as in production.
//
//   query_bench [--clients 4] [--in-flight 4] [--seconds 5] [--shapes 200]
#include <grpcpp/grpcpp.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <thread>

#include "client/best_config_cache.h"
#include "client/client.h"
#include "common/files.h"
#include "coordinator/grpc_services.h"
#include "kernelspec/config.h"

namespace {

namespace v1 = ::tunefleet::v1;
using Clock = std::chrono::steady_clock;

v1::Problem Shape(int64_t m, int64_t n, int64_t k) {
  v1::Problem p;
  for (auto [name, value] : {std::pair{"M", m}, {"N", n}, {"K", k}}) {
    auto* var = p.add_vars();
    var->set_name(name);
    var->set_value(value);
  }
  return p;
}

// A tuning database holding one best configuration for each of `shapes`
// problems of kernel "gemm" on device class "cpu/bench".
tf::Status Seed(const std::string& path, int shapes) {
  TF_ASSIGN_OR_RETURN(auto db, tf::db::TuningDb::Open(path, false));
  auto txn = db->Begin();
  TF_RETURN_IF_ERROR(db->EnsureKernel("fp", "gemm", 1).status());
  tf::db::JobRow job;
  job.kernel = "gemm";
  job.fingerprint = "fp";
  job.device_class = "cpu/bench";
  job.state = v1::JOB_STATE_SUCCEEDED;
  TF_RETURN_IF_ERROR(db->InsertJob(job));
  std::vector<tf::db::CandidateRow> candidates;
  for (int i = 0; i < shapes; ++i) {
    candidates.push_back({0, job.id, "BM=64,BN=64",
                          tf::kernelspec::ProblemText(Shape(256 * (i + 1), 1024, 512)),
                          tf::db::CandidateState::kDone, 0});
  }
  TF_RETURN_IF_ERROR(db->InsertCandidates(candidates));
  for (int i = 0; i < shapes; ++i) {
    tf::db::ResultRow r;
    r.candidate_id = candidates[i].id;
    r.job_id = job.id;
    r.fingerprint = "fp";
    r.config_key = "BM=64,BN=64";
    r.problem_key = tf::kernelspec::ProblemKey(Shape(256 * (i + 1), 1024, 512));
    r.device_class = "cpu/bench";
    r.status = v1::RESULT_STATUS_OK;
    r.timing.set_median_ns(1000 + i);
    TF_RETURN_IF_ERROR(db->InsertResult(r).status());
    TF_RETURN_IF_ERROR(db->OfferBest("gemm", r, 1).status());
  }
  return txn->Commit();
}

double Percentile(std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  size_t i = std::min(v.size() - 1, static_cast<size_t>(q * v.size()));
  std::nth_element(v.begin(), v.begin() + i, v.end());
  return v[i];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"QueryBest throughput and latency over loopback gRPC, and cached lookups"};
  int clients = 4, in_flight = 4, shapes = 200;
  double seconds = 5;
  app.add_option("--clients", clients, "concurrent clients, one channel (connection) each")
      ->capture_default_str();
  app.add_option("--in-flight", in_flight, "queries each client keeps outstanding")
      ->capture_default_str();
  app.add_option("--seconds", seconds, "duration of the gRPC run")->capture_default_str();
  app.add_option("--shapes", shapes, "tuned problem shapes in the database")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  std::string dir =
      std::filesystem::temp_directory_path() / ("tf-query-bench-" + std::to_string(getpid()));
  tf::Status seeded = Seed(dir + ".db", shapes);
  if (!seeded.ok()) {
    std::fprintf(stderr, "seeding failed: %s\n", seeded.ToString().c_str());
    return 1;
  }
  tf::coordinator::CoordinatorOptions options;
  options.db_path = dir + ".db";
  options.artifact_dir = dir + "-artifacts";
  auto coordinator = tf::coordinator::Coordinator::Start(options);
  if (!coordinator.ok()) {
    std::fprintf(stderr, "%s\n", coordinator.status().ToString().c_str());
    return 1;
  }
  v1::CreateTokenRequest reader;
  reader.set_name("query_bench");
  reader.set_role(v1::ROLE_READER);
  auto token = (*coordinator)->CreateToken(reader);
  if (!token.ok()) {
    std::fprintf(stderr, "%s\n", token.status().ToString().c_str());
    return 1;
  }
  tf::coordinator::TuneFleetService service(**coordinator, tf::coordinator::Anonymous::kRefused);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  auto server = builder.BuildAndStart();
  std::string address = "127.0.0.1:" + std::to_string(port);

  // Each client keeps `in_flight` queries outstanding on its own channel
  // through gRPC's callback API, so that the load generator, which shares
  // the machine's cores with the server, costs as little as it can.
  std::atomic<bool> stop{false};
  std::atomic<bool> measuring{false};
  std::mutex latencies_mu;
  std::vector<double> all;
  std::atomic<int64_t> errors{0};
  struct Call {
    grpc::ClientContext context;
    v1::QueryBestRequest request;
    v1::QueryBestResponse response;
    Clock::time_point start;
  };
  std::vector<std::unique_ptr<v1::TuneFleet::Stub>> stubs;
  for (int c = 0; c < clients; ++c) {
    grpc::ChannelArguments args;
    args.SetInt("grpc.channel_id", c);  // distinct channels, distinct connections
    stubs.push_back(v1::TuneFleet::NewStub(
        grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args)));
  }
  std::atomic<int> outstanding{0};
  std::atomic<uint64_t> next_shape{0};
  std::function<void(v1::TuneFleet::Stub*)> issue = [&](v1::TuneFleet::Stub* stub) {
    auto* call = new Call;
    call->request.set_kernel("gemm");
    call->request.set_device_class("cpu/bench");
    *call->request.mutable_problem() = Shape(256 * (1 + next_shape++ % shapes), 1024, 512);
    tf::auth::AttachToken(call->context, token->token());
    call->start = Clock::now();
    outstanding++;
    stub->async()->QueryBest(
        &call->context, &call->request, &call->response, [&, call, stub](grpc::Status status) {
          double us = std::chrono::duration<double, std::micro>(Clock::now() - call->start).count();
          if (!status.ok() || !call->response.exact()) errors++;
          if (measuring) {
            std::lock_guard lock(latencies_mu);
            all.push_back(us);
          }
          delete call;
          if (!stop) issue(stub);
          outstanding--;
        });
  };
  for (auto& stub : stubs) {
    for (int i = 0; i < in_flight; ++i) issue(stub.get());
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // connect and warm up
  measuring = true;
  auto start = Clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  measuring = false;
  double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  stop = true;
  while (outstanding > 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::lock_guard lock(latencies_mu);
  std::printf(
      "QueryBest over loopback gRPC: %d channels x %d in flight, %.1f s: %.0f queries/s, "
      "p50 %.0f us, p99 %.0f us, %lld errors\n",
      clients, in_flight, elapsed, all.size() / elapsed, Percentile(all, 0.5),
      Percentile(all, 0.99), static_cast<long long>(errors.load()));

  tf::client::ClientOptions client_options;
  client_options.token = token->token();
  auto client = tf::client::Client::Connect(address, client_options);
  tf::client::BestConfigCache cache(client->get());
  tf::client::BestConfigKey key("gemm", Shape(512, 1024, 512), "cpu/bench");
  if (!cache.Lookup(key).ok()) {
    std::fprintf(stderr, "cached lookup failed\n");
    return 1;
  }
  constexpr int kLookups = 10'000'000;
  int64_t found = 0;
  auto cache_start = Clock::now();
  for (int i = 0; i < kLookups; ++i) found += cache.Lookup(key).ok();
  double ns =
      std::chrono::duration<double, std::nano>(Clock::now() - cache_start).count() / kLookups;
  std::printf(
      "cached lookup (BestConfigCache hit): %.1f ns per lookup over %d lookups (%lld hits)\n", ns,
      kLookups, static_cast<long long>(found));

  server->Shutdown();
  coordinator->reset();
  std::filesystem::remove_all(dir + "-artifacts");
  for (const char* suffix : {".db", ".db-wal", ".db-shm"}) std::filesystem::remove(dir + suffix);
  return 0;
}
