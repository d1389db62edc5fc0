// The worker daemon: registers its devices with the coordinator, keeps a
// heartbeat, and on every device pulls leases, fetches their artifacts and
// runs them in the device's runner, reporting results as they come.
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "auth/tls.h"
#include "client/coordinator_channels.h"
#include "common/status.h"
#include "tunefleet/v1/worker.grpc.pb.h"
#include "worker/artifact_cache.h"
#include "worker/bundle_builder.h"
#include "worker/device_locks.h"
#include "worker/devices.h"
#include "worker/result_reporter.h"

namespace tf::worker {

struct WorkerOptions {
  // HOST:PORT, or several separated by commas: a coordinator and its
  // standbys, followed through a takeover (client::CoordinatorChannels).
  std::string coordinator;
  std::string devices = "cpu:1";
  std::string label;        // added to every device's labels and class
  std::string cache_dir;    // artifacts, by hash
  std::string runner_path;  // empty: tunefleet-runner beside this executable
  auth::ClientTls tls;      // no CA: plaintext
  std::string token;        // bearer token (role worker); empty: none
  // Runners confine themselves (RunnerSandbox), each in cache_dir/runners/device-N.
  bool sandbox_runners = true;
  uint64_t runner_memory_mb = 0;  // see RunnerSandbox::memory_mb; 0: physical memory
  uint64_t runner_file_mb = 1024;
  int max_candidates = 32;  // per lease; each pays a round trip and an artifact load
  int64_t lease_wait_ms = 1000;
  // Replay devices sleep the recorded compile and run times times this.
  double replay_speed = 1.0;
  // Where the devices' host-wide locks are (DeviceLocks); empty: the default.
  std::string lock_dir;
};

class Worker {
 public:
  // Discovers the devices, locks them for this process (Unavailable, naming
  // the holder, when another worker of this host has one) and prepares the
  // cache; contacts no one yet.
  static Result<std::unique_ptr<Worker>> Create(WorkerOptions options);

  const std::vector<Device>& devices() const { return devices_; }

  // Registers (retrying until the coordinator answers), then heartbeats and
  // runs leases on every device until Shutdown(). Before returning it tries
  // for a while to deliver the results it still holds. A coordinator that
  // refuses the token (unknown, revoked, or not a worker's) ends it: the
  // refusal is returned (kUnauthenticated or kPermissionDenied).
  Status Run();
  // Thread-safe; Run() returns soon after.
  void Shutdown();

 private:
  Worker(WorkerOptions options, std::vector<Device> devices, DeviceLocks locks,
         std::unique_ptr<client::CoordinatorChannels> channels,
         std::unique_ptr<BundleBuilder> bundles);
  // A stub on the channel of the coordinator that serves now.
  std::unique_ptr<v1::WorkerService::Stub> Stub();

  // Retries until the coordinator answers. kCancelled when shut down first;
  // the coordinator's refusal of the token, which no retry would change.
  Status Register();
  void HeartbeatLoop();
  void DeviceLoop(const Device& device);
  // Not OK when the device could not run the lease (its runner does not
  // start): the lease goes back unrun and the device loop waits before the
  // next, rather than take and return leases as fast as the coordinator
  // answers.
  Status RunLease(const Device& device, class RunnerSupervisor& supervisor, const v1::Lease& lease);
  // A lease whose artifacts are BuildBundles (local copies by hash): built
  // here for the device, the candidates that failed to build or exceed its
  // limits reported as such, the rest run artifact by artifact, or a retime
  // lease's all together. The bundles built now are added to `builds`.
  Status RunBundleLease(const Device& device, RunnerSupervisor& supervisor, const v1::Lease& lease,
                        const std::map<std::string, std::string>& bundle_paths,
                        const std::function<void(v1::CandidateResult)>& report,
                        std::vector<v1::WorkerBuild>* builds);
  bool LeaseCancelled(int64_t lease_id);
  Status FetchArtifact(const std::string& sha256, const std::string& path);
  Result<v1::ReportResultsResponse> SendResults(v1::ReportResultsRequest& request);
  // Sleeps, waking early on Shutdown(); false when shutting down.
  bool SleepUnlessStopping(std::chrono::milliseconds duration);
  std::string worker_id();

  const WorkerOptions options_;
  const std::vector<Device> devices_;
  const DeviceLocks locks_;  // held until the worker is gone
  std::unique_ptr<client::CoordinatorChannels> channels_;
  ArtifactCache artifacts_;
  std::unique_ptr<BundleBuilder> bundles_;  // artifacts built here, in cache_dir/built
  std::atomic<bool> stopping_{false};
  Status refusal_;  // set once, before Shutdown(), by a refused registration

  std::mutex mu_;
  std::condition_variable stop_changed_;
  std::string worker_id_;
  std::chrono::milliseconds heartbeat_interval_{1000};
  std::set<int64_t> leases_in_progress_;
  std::set<int64_t> cancelled_leases_;

  std::unique_ptr<ResultReporter> reporter_;  // last: its thread uses the members above
};

}  // namespace tf::worker
