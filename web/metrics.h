// The coordinator's Prometheus metrics, served at /metrics of the dashboard
// port in the text exposition format (prometheus-cpp). Counters and
// histograms are fed by the coordinator's observer hooks and by the gRPC
// interceptor (web/rpc_metrics.h); gauges are read from the coordinator at
// each scrape. docs/dashboard.md lists every name with what it counts.
//
// Thread-safe: hooks come from the coordinator's threads, scrapes from the
// HTTP server's.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include "coordinator/coordinator.h"

namespace tf::web {

class Metrics final : public coordinator::Observer {
 public:
  Metrics();

  // The exposition: the counters and histograms so far, gauges of the
  // coordinator's state now, and the process's gauges (tunefleet_standby 0).
  std::string Scrape(coordinator::Coordinator& coordinator);
  // A standby's, which has no coordinator yet: the process's gauges only,
  // tunefleet_standby 1.
  std::string ScrapeStandby() const;

  // One finished RPC; `full_method` as gRPC names it,
  // "/tunefleet.v1.TuneFleet/SubmitJob".
  void CountRpc(std::string_view full_method, std::string_view code);

  void OnBuildFinished(const compiler::BuildStats& stats, BuildSite site) override;
  void OnLeaseAcquired(int64_t waited_ms) override;
  void OnLeaseStarted(int64_t lease_id, const std::string& worker_id, int device_index) override;
  void OnLeaseEnded(int64_t lease_id) override;
  void OnResultRecorded(const db::ResultRow& row) override;
  void OnResultImported(const db::ResultRow& row) override;

 private:
  void CountResult(const db::ResultRow& row, const char* origin);
  // A build site's series, made at 0 on first use.
  struct BuildSeries {
    prometheus::Histogram& seconds;
    prometheus::Counter& built;
    prometheus::Counter& failed;
    prometheus::Counter& compiler_runs;
  };
  BuildSeries BuildSeriesOf(BuildSite site);
  using Device = std::pair<std::string, int>;  // worker id, device index
  // Time with at least one lease, per device: leases overlap (a worker may
  // hold more than one per device), busy time does not.
  struct Busy {
    int active = 0;
    int64_t since_ms = 0;  // of the current busy stretch, while active
    int64_t total_ms = 0;  // of the stretches that ended
  };
  void UpdateBusyCountersLocked(int64_t now_ms);

  const double start_unix_s_;
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& rpcs_;
  prometheus::Family<prometheus::Counter>& results_;
  prometheus::Family<prometheus::Histogram>& build_seconds_;
  prometheus::Family<prometheus::Counter>& built_configurations_;
  prometheus::Family<prometheus::Counter>& compiler_runs_;
  prometheus::Histogram& lease_acquire_seconds_;
  prometheus::Family<prometheus::Counter>& busy_seconds_;

  std::mutex mu_;
  std::map<int64_t, Device> lease_devices_;
  std::map<Device, Busy> busy_;
};

}  // namespace tf::web
