// The coordinator at fleet scale: a real coordinator process (real SQLite
// database, real build) and, in this process, N lightweight workers over
// loopback gRPC that register, heartbeat at the coordinator's interval, take
// leases and report synthetic results at once (nothing is run). Measures
// results recorded per second (checked against the database), heartbeats per
// second, and lease and report latency, with the coordinator's CPU time per
// result: where the time of a result goes.
//
// The job is one cheap real build shared by many candidates: a trivial
// kernel with --configs instantiations, compiled in one batch, times 64
// problem shapes.
//
//   scale_bench [--workers 500] [--threads 8] [--configs 1024] [--seconds 10]
//               [--db-sync full|normal] [--coordinator-binary PATH]
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "client/client.h"
#include "common/files.h"
#include "common/subprocess.h"
#include "db/sqlite.h"
#include "kernelspec/spec_loader.h"
#include "tunefleet/v1/worker.grpc.pb.h"

namespace {

namespace v1 = ::tunefleet::v1;
using Clock = std::chrono::steady_clock;

constexpr int kProblems = 64;  // the most a spec may have

// A kernel whose builds are cheap: one template, one batch.
tf::Status WriteSpec(const std::string& dir, int configs) {
  TF_RETURN_IF_ERROR(tf::WriteFileAtomic(dir + "/scale.cpp", R"cpp(
#include <cstdint>
    template <int A>
    void scale(const float* in, float* out, int64_t n) {
      for (int64_t i = 0; i < n; ++i) out[i] = in[i] * A;
    }
  )cpp"));
  std::string yaml = "kernel: scale\nlanguage: cpp\nsource: scale.cpp\nentry: \"scale<{A}>\"\n";
  yaml += "params:\n  A: {from: 1, to: " + std::to_string(configs) + ", step: 1}\nproblems:\n";
  for (int n = 1; n <= kProblems; ++n) yaml += "  - {n: " + std::to_string(n * 64) + "}\n";
  yaml +=
      "buffers:\n  in: {dtype: f32, count: \"n\"}\n  out: {dtype: f32, count: \"n\", output: "
      "true}\ntarget: {vendor: cpu, label: scale}\n";
  return tf::WriteFileAtomic(dir + "/scale.yaml", yaml);
}

// User+system CPU seconds of a process so far.
double CpuSeconds(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  std::istringstream rest(line.substr(line.rfind(')') + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14 || i == 15) ticks += std::stod(field);  // utime, stime
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

struct Latencies {
  std::mutex mu;
  std::vector<double> lease_ms, report_ms, heartbeat_ms;
  void Add(std::vector<double>& to, const std::vector<double>& from) {
    std::lock_guard lock(mu);
    to.insert(to.end(), from.begin(), from.end());
  }
};

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

struct Counters {
  std::atomic<int64_t> recorded{0}, duplicates{0}, leases{0}, heartbeats{0}, errors{0};
};

struct VirtualWorker {
  std::string id;
  Clock::time_point next_heartbeat;
};

std::unique_ptr<v1::WorkerService::Stub> Connect(const std::string& address, int connection) {
  grpc::ChannelArguments args;
  args.SetInt("tunefleet.bench.connection", connection);  // distinct args: its own connection
  return v1::WorkerService::NewStub(
      grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args));
}

std::unique_ptr<grpc::ClientContext> WithDeadline() {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  return context;
}

// Keeps one share of the workers heartbeating on time, as their own
// heartbeat threads would.
void Heartbeats(const std::string& address, int connection, std::vector<VirtualWorker> workers,
                std::chrono::milliseconds interval, const std::atomic<bool>& stop,
                const std::atomic<bool>& measuring, Counters& counters, Latencies& latencies) {
  auto stub = Connect(address, connection);
  std::vector<double> heartbeat_ms;
  while (!stop) {
    auto next = Clock::now() + std::chrono::milliseconds(1);
    for (auto& w : workers) {
      if (Clock::now() < w.next_heartbeat) {
        next = std::min(next, w.next_heartbeat);
        continue;
      }
      v1::HeartbeatRequest request;
      request.set_worker_id(w.id);
      v1::HeartbeatResponse response;
      auto start = Clock::now();
      auto status = stub->Heartbeat(WithDeadline().get(), request, &response);
      if (!status.ok() || response.reregister()) counters.errors++;
      if (measuring) {
        heartbeat_ms.push_back(MsSince(start));
        counters.heartbeats++;
      }
      w.next_heartbeat += interval;
    }
    std::this_thread::sleep_until(next);
  }
  latencies.Add(latencies.heartbeat_ms, heartbeat_ms);
}

// One share of the workers asking for a lease in turn; a lease is reported
// whole at once.
void Leases(const std::string& address, int connection, std::vector<VirtualWorker> workers,
            const std::atomic<bool>& stop, const std::atomic<bool>& measuring, Counters& counters,
            Latencies& latencies) {
  auto stub = Connect(address, connection);
  std::vector<double> lease_ms, report_ms;
  while (!stop) {
    for (auto& w : workers) {
      if (stop) break;
      v1::AcquireLeaseRequest acquire;
      acquire.set_worker_id(w.id);
      acquire.set_wait_ms(0);
      v1::AcquireLeaseResponse lease;
      auto start = Clock::now();
      if (!stub->AcquireLease(WithDeadline().get(), acquire, &lease).ok()) {
        counters.errors++;
        continue;
      }
      if (!lease.has_lease()) continue;
      if (measuring) lease_ms.push_back(MsSince(start));
      counters.leases++;
      v1::ReportResultsRequest report;
      report.set_worker_id(w.id);
      report.set_lease_id(lease.lease().lease_id());
      report.set_lease_finished(true);
      for (const auto& c : lease.lease().candidates()) {
        auto* r = report.add_results();
        r->set_candidate_id(c.candidate_id());
        r->set_status(v1::RESULT_STATUS_OK);
        auto* t = r->mutable_timing();
        t->set_median_ns(1000.0 + static_cast<double>(c.candidate_id() % 977));
        t->set_p10_ns(t->median_ns() * 0.95);
        t->set_p90_ns(t->median_ns() * 1.05);
        t->set_repeats(10);
      }
      v1::ReportResultsResponse reported;
      start = Clock::now();
      if (!stub->ReportResults(WithDeadline().get(), report, &reported).ok()) {
        counters.errors++;
        continue;
      }
      if (measuring) report_ms.push_back(MsSince(start));
      counters.recorded += reported.recorded();
      counters.duplicates += reported.duplicates();
    }
    // Without work, ask again soon but do not spin.
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  latencies.Add(latencies.lease_ms, lease_ms);
  latencies.Add(latencies.report_ms, report_ms);
}

int64_t CountResults(const std::string& db_path, int64_t job_id) {
  auto db = tf::db::Database::Open(db_path, false);
  if (!db.ok()) return -1;
  auto stmt = (*db)->Prepare("SELECT COUNT(*) FROM results WHERE job_id = ?");
  if (!stmt.ok()) return -1;
  stmt->Bind(1, job_id);
  auto row = stmt->Step();
  return row.ok() && *row ? stmt->Int(0) : -1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Coordinator throughput with many lightweight workers over loopback gRPC."};
  int workers = 500, threads = 8, configs = 1024;
  double seconds = 10;
  std::string sync = "full";
  std::string binary = tf::ExecutableDir() + "/../bin/tunefleet-coordinator";
  app.add_option("--workers", workers, "registered, heartbeating workers")->capture_default_str();
  app.add_option("--threads", threads,
                 "client threads taking leases (and as many heartbeating), each for a share of "
                 "the workers")
      ->capture_default_str();
  app.add_option("--configs", configs, "configurations (x64 problems = candidates)")
      ->capture_default_str();
  app.add_option("--seconds", seconds, "measurement window at most")->capture_default_str();
  app.add_option("--db-sync", sync, "the coordinator's --db-sync")
      ->check(CLI::IsMember({"full", "normal"}))
      ->capture_default_str();
  app.add_option("--coordinator-binary", binary,
                 "the coordinator to measure (another build, for a before/after comparison)")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  std::string dir = (std::filesystem::temp_directory_path() / "tunefleet-scale-XXXXXX").string();
  if (!mkdtemp(dir.data())) return 1;
  if (auto written = WriteSpec(dir, configs); !written.ok()) {
    std::fprintf(stderr, "%s\n", written.message().c_str());
    return 1;
  }
  const std::string db_path = dir + "/tunefleet.db";
  const std::string port_file = dir + "/port";
  const int64_t heartbeat_ms = 1000;
  tf::SpawnOptions logged;
  logged.log_path = dir + "/coordinator.log";
  auto spawned = tf::ChildProcess::Spawn(
      {binary, "--plaintext", "--allow-anonymous", "--listen", "127.0.0.1:0", "--db", db_path,
       "--artifacts", dir + "/artifacts", "--port-file", port_file, "--db-sync", sync,
       "--batch-size", std::to_string(configs), "--heartbeat-ms", std::to_string(heartbeat_ms)},
      logged);
  if (!spawned.ok()) {
    std::fprintf(stderr, "%s\n", spawned.status().message().c_str());
    return 1;
  }
  const auto coordinator = std::move(*spawned);  // SIGKILLed if we return early
  auto ready = Clock::now() + std::chrono::seconds(30);
  while (!std::filesystem::exists(port_file) && Clock::now() < ready) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  auto port = tf::ReadFile(port_file);
  if (!port.ok()) {
    std::fprintf(stderr, "coordinator did not start; see %s/coordinator.log\n", dir.c_str());
    return 1;
  }
  const std::string address = "127.0.0.1:" + std::to_string(std::stoi(*port));

  // Register everyone first, each a host of one CPU device labelled "scale".
  auto channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  auto stub = v1::WorkerService::NewStub(channel);
  std::vector<std::vector<VirtualWorker>> shares(threads);
  auto t0 = Clock::now();
  for (int i = 0; i < workers; ++i) {
    v1::RegisterRequest request;
    request.set_hostname("load-" + std::to_string(i));
    auto* d = request.add_devices();
    d->set_vendor("cpu");
    d->set_arch("host");
    d->set_device_class("cpu-scale");
    d->add_labels("scale");
    v1::RegisterResponse response;
    grpc::ClientContext context;
    if (!stub->Register(&context, request, &response).ok()) {
      std::fprintf(stderr, "register failed\n");
      return 1;
    }
    // Spread heartbeats over the interval, as real workers would be.
    auto first = Clock::now() + std::chrono::milliseconds(heartbeat_ms * i / workers);
    shares[i % threads].push_back({response.worker_id(), first});
  }
  const double register_s = std::chrono::duration<double>(Clock::now() - t0).count();

  Counters counters;
  Latencies latencies;
  std::atomic<bool> stop{false}, measuring{false};
  std::vector<std::thread> drivers;
  for (int t = 0; t < threads; ++t) {
    drivers.emplace_back(Leases, address, t, shares[t], std::cref(stop), std::cref(measuring),
                         std::ref(counters), std::ref(latencies));
    drivers.emplace_back(Heartbeats, address, threads + t, shares[t],
                         std::chrono::milliseconds(heartbeat_ms), std::cref(stop),
                         std::cref(measuring), std::ref(counters), std::ref(latencies));
  }

  auto client = tf::client::Client::Connect(address);
  auto loaded = tf::kernelspec::LoadSpecFile(dir + "/scale.yaml");
  if (!client.ok() || !loaded.ok()) {
    std::fprintf(stderr, "cannot submit: %s\n", loaded.status().message().c_str());
    return 1;
  }
  auto job = (*client)->Submit(loaded->spec, loaded->sources, 0);
  if (!job.ok()) {
    std::fprintf(stderr, "submit: %s\n", job.status().message().c_str());
    return 1;
  }
  // Wait for the build; the workers heartbeat meanwhile.
  auto build_start = Clock::now();
  v1::Job now;
  while (true) {
    auto got = (*client)->GetJob(job->job_id());
    if (got.ok()) now = *got;
    if (now.state() != v1::JOB_STATE_QUEUED && now.builds_done() == now.configurations()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const double build_s = std::chrono::duration<double>(Clock::now() - build_start).count();

  std::fprintf(stderr, "built in %.1f s; measuring (coordinator pid %d)\n", build_s,
               static_cast<int>(coordinator->pid()));
  const int64_t recorded_before = counters.recorded, leases_before = counters.leases;
  const double cpu_before = CpuSeconds(coordinator->pid());
  const double bench_cpu_before = CpuSeconds(getpid());
  const auto start = Clock::now();
  measuring = true;
  while (counters.recorded < now.candidates_total() &&
         std::chrono::duration<double>(Clock::now() - start).count() < seconds) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  measuring = false;
  const double window = std::chrono::duration<double>(Clock::now() - start).count();
  const int64_t recorded = counters.recorded - recorded_before;
  const int64_t leases = counters.leases - leases_before;
  const int64_t heartbeats = counters.heartbeats;
  const double cpu = CpuSeconds(coordinator->pid()) - cpu_before;
  const double bench_cpu = CpuSeconds(getpid()) - bench_cpu_before;
  stop = true;
  for (auto& d : drivers) d.join();
  const int64_t in_db = CountResults(db_path, job->job_id());

  std::printf("scale_bench: %d workers on 2 x %d client threads, db-sync %s, coordinator %s\n",
              workers, threads, sync.c_str(), address.c_str());
  std::printf("job: %lld candidates (%d configurations x %d problems), built in %.1f s\n",
              static_cast<long long>(now.candidates_total()), configs, kProblems, build_s);
  std::printf("registration: %d workers in %.2f s\n", workers, register_s);
  std::printf("results recorded: %lld in %.2f s = %.0f/s (database holds %lld of the job)\n",
              static_cast<long long>(recorded), window, recorded / window,
              static_cast<long long>(in_db));
  std::printf("leases: %.0f/s, p50 %.2f ms, p99 %.2f ms; reports p50 %.2f ms, p99 %.2f ms\n",
              leases / window, Percentile(latencies.lease_ms, 0.5),
              Percentile(latencies.lease_ms, 0.99), Percentile(latencies.report_ms, 0.5),
              Percentile(latencies.report_ms, 0.99));
  std::printf("heartbeats: %.0f/s (%d workers every %lld ms), p50 %.2f ms, p99 %.2f ms\n",
              heartbeats / window, workers, static_cast<long long>(heartbeat_ms),
              Percentile(latencies.heartbeat_ms, 0.5), Percentile(latencies.heartbeat_ms, 0.99));
  std::printf("cpu: coordinator %.2f s (%.1f us per result), load clients %.2f s; errors %lld\n",
              cpu, recorded ? 1e6 * cpu / recorded : 0.0, bench_cpu,
              static_cast<long long>(counters.errors.load()));
  coordinator->Terminate(10);  // a clean shutdown before its files go
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return recorded > 0 ? 0 : 1;
}
