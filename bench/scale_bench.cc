// The coordinator at fleet scale: a real coordinator process (real build,
// real database) and, in this process, N lightweight workers over loopback
// gRPC that register, heartbeat at the coordinator's interval, take leases
// and report synthetic results at once (nothing is run). Measures results
// recorded per second (checked against the database), heartbeats per
// second, and lease and report latency, with the coordinator's CPU time per
// result: where the time of a result goes. It does so on each database in
// turn, in one run: an SQLite file, and a throwaway PostgreSQL server of its
// own (tests/test_util's PostgresCluster, on 127.0.0.1), and prints their
// ratio. Then, on PostgreSQL, the standby's takeover: a second coordinator
// stands by, the active one is SIGKILLed, and the time until the standby
// serves (and until a client given both addresses gets an answer) is taken,
// --takeovers times.
//
// The job is one cheap real build shared by many candidates: a trivial
// kernel with --configs instantiations, compiled in one batch, times 64
// problem shapes.
//
//   scale_bench [--workers 500] [--threads 8] [--configs 1024] [--seconds 10]
//               [--db-sync full|normal] [--databases sqlite,postgresql]
//               [--takeovers 5] [--coordinator-binary PATH]
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
#include <optional>
#include <thread>

#include "client/client.h"
#include "common/files.h"
#include "common/subprocess.h"
#include "db/database.h"
#include "kernelspec/spec_loader.h"
#include "tests/test_util.h"
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

struct Settings {
  int workers = 500, threads = 8, configs = 1024;
  double seconds = 10;
  std::string sync = "full";
  std::string binary = tf::ExecutableDir() + "/../bin/tunefleet-coordinator";
};

// What one database sustained.
struct Figures {
  double results_per_s = 0;
  double coordinator_us_per_result = 0;
};

// A coordinator process on `db` in `dir`, serving on a port of its own (or
// `port`); nullptr (and a message) when it does not start within 30 s, or
// with `wait` false, at once: a standby serves later (WaitForPort).
std::unique_ptr<tf::ChildProcess> StartCoordinator(const Settings& settings, const std::string& dir,
                                                   const std::string& db, int64_t heartbeat_ms,
                                                   int port = 0) {
  std::filesystem::create_directories(dir);
  tf::SpawnOptions logged;
  logged.log_path = dir + "/coordinator.log";
  std::filesystem::remove(dir + "/port");
  auto spawned = tf::ChildProcess::Spawn(
      {settings.binary, "--plaintext", "--allow-anonymous", "--listen",
       "127.0.0.1:" + std::to_string(port), "--db", db, "--admin-token-file", dir + "/admin.token",
       "--artifacts", dir + "/artifacts", "--port-file", dir + "/port", "--db-sync", settings.sync,
       "--batch-size", std::to_string(settings.configs), "--heartbeat-ms",
       std::to_string(heartbeat_ms)},
      logged);
  if (!spawned.ok()) {
    std::fprintf(stderr, "%s\n", spawned.status().message().c_str());
    return nullptr;
  }
  return std::move(*spawned);
}

// The port a coordinator in `dir` serves on, once it does; 0 after `timeout`.
int WaitForPort(const std::string& dir, std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  while (!std::filesystem::exists(dir + "/port") && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  auto port = tf::ReadFile(dir + "/port");
  return port.ok() ? std::stoi(*port) : 0;
}

std::optional<Figures> Measure(const Settings& settings, const std::string& dir,
                               const std::string& db, const std::string& db_label) {
  const int workers = settings.workers, threads = settings.threads, configs = settings.configs;
  const int64_t heartbeat_ms = 1000;
  const auto coordinator = StartCoordinator(settings, dir, db, heartbeat_ms);
  if (!coordinator) return std::nullopt;  // SIGKILLed if we return early
  const int port = WaitForPort(dir, std::chrono::seconds(30));
  if (port == 0) {
    std::fprintf(stderr, "coordinator did not start; see %s/coordinator.log\n", dir.c_str());
    return std::nullopt;
  }
  const std::string address = "127.0.0.1:" + std::to_string(port);

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
      return std::nullopt;
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
  auto stop_drivers = [&] {
    stop = true;
    for (auto& d : drivers) d.join();
  };

  auto client = tf::client::Client::Connect(address);
  auto loaded = tf::kernelspec::LoadSpecFile(dir + "/../scale.yaml");
  auto job = client.ok() && loaded.ok()
                 ? (*client)->Submit(loaded->spec, loaded->sources, 0)
                 : tf::Result<v1::Job>(tf::Status::Internal("cannot load the spec"));
  if (!job.ok()) {
    std::fprintf(stderr, "submit: %s\n", job.status().message().c_str());
    stop_drivers();
    return std::nullopt;
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

  std::fprintf(stderr, "%s: built in %.1f s; measuring (coordinator pid %d)\n", db_label.c_str(),
               build_s, static_cast<int>(coordinator->pid()));
  const int64_t recorded_before = counters.recorded, leases_before = counters.leases;
  const double cpu_before = CpuSeconds(coordinator->pid());
  const double bench_cpu_before = CpuSeconds(getpid());
  const auto start = Clock::now();
  measuring = true;
  while (counters.recorded < now.candidates_total() &&
         std::chrono::duration<double>(Clock::now() - start).count() < settings.seconds) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  measuring = false;
  const double window = std::chrono::duration<double>(Clock::now() - start).count();
  const int64_t recorded = counters.recorded - recorded_before;
  const int64_t leases = counters.leases - leases_before;
  const int64_t heartbeats = counters.heartbeats;
  const double cpu = CpuSeconds(coordinator->pid()) - cpu_before;
  const double bench_cpu = CpuSeconds(getpid()) - bench_cpu_before;
  stop_drivers();
  const int64_t in_db = CountResults(db, job->job_id());

  std::printf("\n[%s] %d workers on 2 x %d client threads, db-sync %s, coordinator %s\n",
              db_label.c_str(), workers, threads, settings.sync.c_str(), address.c_str());
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
  if (recorded == 0) return std::nullopt;
  return Figures{recorded / window, 1e6 * cpu / static_cast<double>(recorded)};
}

// The standby's takeover, `rounds` times: two coordinators on `url`, the
// active one SIGKILLed once the other stands by; seconds until the standby
// serves, and until a client given both addresses is answered.
void MeasureTakeovers(const Settings& settings, const std::string& dir, const std::string& url,
                      int rounds) {
  const int ports[2] = {tf::testing::FreePort(), tf::testing::FreePort()};
  const std::string dirs[2] = {dir + "/a", dir + "/b"};
  const std::string both =
      "127.0.0.1:" + std::to_string(ports[0]) + ",127.0.0.1:" + std::to_string(ports[1]);
  auto client = tf::client::Client::Connect(both);
  std::unique_ptr<tf::ChildProcess> running[2];
  running[0] = StartCoordinator(settings, dirs[0], url, 1000, ports[0]);
  if (!running[0] || WaitForPort(dirs[0], std::chrono::seconds(30)) == 0 || !client.ok()) {
    std::fprintf(stderr, "takeover: the first coordinator did not start\n");
    return;
  }
  std::vector<double> serve_s, answer_s;
  int active = 0;
  for (int round = 0; round < rounds; ++round) {
    const int standby = 1 - active;
    running[standby] = StartCoordinator(settings, dirs[standby], url, 1000, ports[standby]);
    auto standing_by = Clock::now() + std::chrono::seconds(30);
    while (Clock::now() < standing_by) {
      auto log = tf::ReadFile(dirs[standby] + "/coordinator.log");
      if (log.ok() && log->find("standing by") != std::string::npos) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!(*client)->ListJobs(1).ok()) {
      std::fprintf(stderr, "takeover: the active coordinator does not answer\n");
      return;
    }
    const auto killed = Clock::now();
    running[active]->Kill();
    if (WaitForPort(dirs[standby], std::chrono::seconds(60)) == 0) {
      std::fprintf(stderr, "takeover: the standby did not take over; see %s/coordinator.log\n",
                   dirs[standby].c_str());
      return;
    }
    serve_s.push_back(std::chrono::duration<double>(Clock::now() - killed).count());
    while (!(*client)->ListJobs(1).ok()) {
    }
    answer_s.push_back(std::chrono::duration<double>(Clock::now() - killed).count());
    active = standby;
  }
  std::printf(
      "\n[takeover] %d SIGKILLs of the active coordinator: the standby served after median "
      "%.2f s (max %.2f s); a client given both addresses was answered after median %.2f s "
      "(max %.2f s)\n",
      rounds, Percentile(serve_s, 0.5), *std::max_element(serve_s.begin(), serve_s.end()),
      Percentile(answer_s, 0.5), *std::max_element(answer_s.begin(), answer_s.end()));
  running[active]->Terminate(10);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Coordinator throughput with many lightweight workers over loopback gRPC, on "
      "SQLite and on PostgreSQL; and the standby's takeover time."};
  Settings settings;
  std::string databases = "sqlite,postgresql";
  int takeovers = 5;
  app.add_option("--workers", settings.workers, "registered, heartbeating workers")
      ->capture_default_str();
  app.add_option("--threads", settings.threads,
                 "client threads taking leases (and as many heartbeating), each for a share of "
                 "the workers")
      ->capture_default_str();
  app.add_option("--configs", settings.configs, "configurations (x64 problems = candidates)")
      ->capture_default_str();
  app.add_option("--seconds", settings.seconds, "measurement window at most, per database")
      ->capture_default_str();
  app.add_option("--db-sync", settings.sync, "the coordinator's --db-sync")
      ->check(CLI::IsMember({"full", "normal"}))
      ->capture_default_str();
  app.add_option("--databases", databases,
                 "which to measure: sqlite, postgresql (a throwaway server of its own), or both")
      ->check(CLI::IsMember({"sqlite", "postgresql", "sqlite,postgresql"}))
      ->capture_default_str();
  app.add_option("--takeovers", takeovers, "standby takeovers to time on PostgreSQL (0: none)")
      ->capture_default_str();
  app.add_option("--coordinator-binary", settings.binary,
                 "the coordinator to measure (another build, for a before/after comparison)")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  std::string dir = (std::filesystem::temp_directory_path() / "tunefleet-scale-XXXXXX").string();
  if (!mkdtemp(dir.data())) return 1;
  if (auto written = WriteSpec(dir, settings.configs); !written.ok()) {
    std::fprintf(stderr, "%s\n", written.message().c_str());
    return 1;
  }
  std::optional<Figures> sqlite, postgres;
  if (databases.find("sqlite") != std::string::npos) {
    sqlite = Measure(settings, dir + "/sqlite", dir + "/sqlite/tunefleet.db", "sqlite");
    if (!sqlite) return 1;
  }
  if (databases.find("postgresql") != std::string::npos) {
    try {
      tf::testing::PostgresCluster cluster;
      postgres =
          Measure(settings, dir + "/postgresql", cluster.CreateDatabase("scale"), "postgresql");
      if (!postgres) return 1;
      if (takeovers > 0) {
        MeasureTakeovers(settings, dir + "/takeover", cluster.CreateDatabase("takeover"),
                         takeovers);
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "postgresql: %s\n", e.what());
      return 1;
    }
  }
  if (sqlite && postgres) {
    std::printf(
        "\nresults/s: sqlite %.0f, postgresql %.0f: postgresql/sqlite = %.2f; coordinator CPU "
        "per result %.1f vs %.1f us\n",
        sqlite->results_per_s, postgres->results_per_s,
        postgres->results_per_s / sqlite->results_per_s, sqlite->coordinator_us_per_result,
        postgres->coordinator_us_per_result);
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return 0;
}
