#include "web/metrics.h"

#include <prometheus/gauge.h>
#include <prometheus/text_serializer.h>

#include <algorithm>
#include <cctype>

#include "common/files.h"

namespace tf::web {
namespace {

namespace v1 = ::tunefleet::v1;

// "RESULT_STATUS_COMPILE_FAILED" -> "compile_failed".
std::string EnumLabel(const std::string& name, std::string_view prefix) {
  std::string label = name.substr(std::min(name.size(), prefix.size()));
  std::transform(label.begin(), label.end(), label.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return label;
}

prometheus::Family<prometheus::Counter>& Counters(prometheus::Registry& registry,
                                                  const std::string& name,
                                                  const std::string& help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(registry);
}

// What every scrape holds, a standby's too: whether this process stands by
// (a standby that answers is not a dead one), and when it started.
void AddProcessGauges(prometheus::Registry& registry, bool standby, double start_unix_s) {
  prometheus::BuildGauge()
      .Name("tunefleet_standby")
      .Help(
          "1 while this coordinator stands by for another one's database (PostgreSQL), 0 "
          "while it serves")
      .Register(registry)
      .Add({})
      .Set(standby ? 1 : 0);
  prometheus::BuildGauge()
      .Name("process_start_time_seconds")
      .Help("When this coordinator process started, in unix seconds")
      .Register(registry)
      .Add({})
      .Set(start_unix_s);
}

}  // namespace

Metrics::Metrics()
    : start_unix_s_(static_cast<double>(NowUnixMs()) / 1000),
      registry_(std::make_shared<prometheus::Registry>()),
      rpcs_(Counters(*registry_, "tunefleet_grpc_server_handled_total",
                     "RPCs of the gRPC API completed, by service, method and status code")),
      results_(Counters(*registry_, "tunefleet_results_recorded_total",
                        "Candidate results committed to the tuning database, by status and "
                        "origin (worker: measured; build: failed or pruned at build time; "
                        "reused: from an earlier job; imported: tunefleet import results)")),
      build_seconds_(prometheus::BuildHistogram()
                         .Name("tunefleet_build_duration_seconds")
                         .Help("Wall time of each build, by site: a job's on the coordinator, "
                               "a batch's on a worker (compile_on: worker)")
                         .Register(*registry_)),
      built_configurations_(Counters(*registry_, "tunefleet_build_configurations_total",
                                     "Configurations built, by outcome (built, failed) and site "
                                     "(coordinator, worker)")),
      compiler_runs_(Counters(*registry_, "tunefleet_compiler_runs_total",
                              "Compiler processes run by builds, split batches included, by "
                              "site (coordinator, worker)")),
      lease_acquire_seconds_(
          prometheus::BuildHistogram()
              .Name("tunefleet_lease_acquire_seconds")
              .Help("Time from a worker's AcquireLease call to the lease it got, the long "
                    "poll for work included")
              .Register(*registry_)
              .Add({},
                   prometheus::Histogram::BucketBoundaries{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                           0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30})),
      busy_seconds_(Counters(*registry_, "tunefleet_device_busy_seconds_total",
                             "Time each device held at least one lease; its rate is the "
                             "device's busy share")) {
  // Every site's series from the start, at 0: a rate over them needs no gap.
  for (BuildSite site : {BuildSite::kCoordinator, BuildSite::kWorker}) BuildSeriesOf(site);
}

void Metrics::CountRpc(std::string_view full_method, std::string_view code) {
  // "/package.Service/Method"
  std::string_view path = full_method.substr(full_method.starts_with('/') ? 1 : 0);
  size_t slash = path.find('/');
  std::string service(slash == std::string_view::npos ? "" : path.substr(0, slash));
  std::string method(slash == std::string_view::npos ? path : path.substr(slash + 1));
  rpcs_.Add({{"grpc_service", service}, {"grpc_method", method}, {"grpc_code", std::string(code)}})
      .Increment();
}

Metrics::BuildSeries Metrics::BuildSeriesOf(BuildSite site) {
  const std::string where = site == BuildSite::kWorker ? "worker" : "coordinator";
  return {build_seconds_.Add(
              {{"site", where}},
              prometheus::Histogram::BucketBoundaries{0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600}),
          built_configurations_.Add({{"outcome", "built"}, {"site", where}}),
          built_configurations_.Add({{"outcome", "failed"}, {"site", where}}),
          compiler_runs_.Add({{"site", where}})};
}

void Metrics::OnBuildFinished(const compiler::BuildStats& stats, BuildSite site) {
  BuildSeries series = BuildSeriesOf(site);
  series.seconds.Observe(stats.wall_seconds);
  series.built.Increment(static_cast<double>(stats.configs - stats.failed_configs));
  series.failed.Increment(static_cast<double>(stats.failed_configs));
  series.compiler_runs.Increment(static_cast<double>(stats.compiler_runs));
}

void Metrics::OnLeaseAcquired(int64_t waited_ms) {
  lease_acquire_seconds_.Observe(static_cast<double>(waited_ms) / 1000.0);
}

void Metrics::OnLeaseStarted(int64_t lease_id, const std::string& worker_id, int device_index) {
  std::lock_guard lock(mu_);
  Device device{worker_id, device_index};
  if (!lease_devices_.emplace(lease_id, device).second) return;
  Busy& busy = busy_[device];
  if (busy.active++ == 0) busy.since_ms = NowUnixMs();
}

void Metrics::OnLeaseEnded(int64_t lease_id) {
  std::lock_guard lock(mu_);
  auto lease = lease_devices_.find(lease_id);
  if (lease == lease_devices_.end()) return;
  Busy& busy = busy_[lease->second];
  if (--busy.active == 0) busy.total_ms += NowUnixMs() - busy.since_ms;
  lease_devices_.erase(lease);
}

void Metrics::OnResultRecorded(const db::ResultRow& row) {
  CountResult(row, row.cached ? "reused" : row.worker.empty() ? "build" : "worker");
}

void Metrics::OnResultImported(const db::ResultRow& row) { CountResult(row, "imported"); }

void Metrics::CountResult(const db::ResultRow& row, const char* origin) {
  results_
      .Add({{"status", EnumLabel(v1::ResultStatus_Name(row.status), "RESULT_STATUS_")},
            {"origin", origin}})
      .Increment();
}

void Metrics::UpdateBusyCountersLocked(int64_t now_ms) {
  for (const auto& [device, busy] : busy_) {
    int64_t total_ms = busy.total_ms + (busy.active > 0 ? now_ms - busy.since_ms : 0);
    auto& counter =
        busy_seconds_.Add({{"worker", device.first}, {"device", std::to_string(device.second)}});
    double delta = static_cast<double>(total_ms) / 1000.0 - counter.Value();
    if (delta > 0) counter.Increment(delta);
  }
}

std::string Metrics::Scrape(coordinator::Coordinator& coordinator) {
  {
    std::lock_guard lock(mu_);
    UpdateBusyCountersLocked(NowUnixMs());
  }
  // Gauges live in a registry of their own, made anew at each scrape, so
  // that what no longer exists (a job state now empty stays, at 0) leaves
  // no stale series behind.
  prometheus::Registry now;
  auto gauges = [&](const std::string& name, const std::string& help) -> auto& {
    return prometheus::BuildGauge().Name(name).Help(help).Register(now);
  };
  const coordinator::Activity activity = coordinator.CurrentActivity();
  auto& jobs = gauges("tunefleet_jobs",
                      "Jobs by state: every unfinished job, and the jobs that ended since this "
                      "coordinator started");
  for (v1::JobState state : {v1::JOB_STATE_QUEUED, v1::JOB_STATE_RUNNING, v1::JOB_STATE_SUCCEEDED,
                             v1::JOB_STATE_FAILED, v1::JOB_STATE_CANCELLED}) {
    auto count = activity.jobs.find(state);
    jobs.Add({{"state", EnumLabel(v1::JobState_Name(state), "JOB_STATE_")}})
        .Set(count == activity.jobs.end() ? 0 : static_cast<double>(count->second));
  }
  auto& queued = gauges("tunefleet_candidates_queued",
                        "Candidates waiting: for a lease (built) or for their build");
  queued.Add({{"waiting_for", "lease"}}).Set(static_cast<double>(activity.candidates_ready));
  queued.Add({{"waiting_for", "build"}})
      .Set(static_cast<double>(activity.candidates_waiting_build));
  gauges("tunefleet_leases_active", "Leases granted and not yet ended")
      .Add({})
      .Set(static_cast<double>(activity.leases.size()));
  auto& workers = gauges("tunefleet_workers", "Registered workers: alive (heartbeating) or silent");
  auto& devices = gauges("tunefleet_devices", "Devices of alive workers, by device class");
  // A sample even where no device is alive, or `tunefleet_devices == 0`
  // never fires: the classes of silent workers at 0, and 0 without a class
  // while no worker is registered.
  double alive = 0, silent = 0;
  std::map<std::string, double> by_class;
  for (const auto& w : coordinator.ListWorkers()) {
    (w.alive() ? alive : silent) += 1;
    for (const auto& d : w.devices()) by_class[d.device_class()] += w.alive() ? 1 : 0;
  }
  workers.Add({{"state", "alive"}}).Set(alive);
  workers.Add({{"state", "silent"}}).Set(silent);
  if (by_class.empty()) devices.Add({}).Set(0);
  for (const auto& [device_class, count] : by_class) {
    devices.Add({{"device_class", device_class}}).Set(count);
  }
  AddProcessGauges(now, /*standby=*/false, start_unix_s_);

  auto families = registry_->Collect();
  auto current = now.Collect();
  families.insert(families.end(), current.begin(), current.end());
  return prometheus::TextSerializer().Serialize(families);
}

std::string Metrics::ScrapeStandby() const {
  prometheus::Registry now;
  AddProcessGauges(now, /*standby=*/true, start_unix_s_);
  return prometheus::TextSerializer().Serialize(now.Collect());
}

}  // namespace tf::web
