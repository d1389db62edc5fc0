#include "worker/worker.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "auth/bearer.h"
#include "client/channel_setup.h"
#include "common/backoff.h"
#include "common/files.h"
#include "common/grpc_status.h"
#include "common/number_text.h"
#include "common/subprocess.h"
#include "kernelspec/config.h"
#include "kernelspec/space.h"
#include "runner/lease_artifacts.h"
#include "vendors/device_kinds.h"
#include "vendors/toolchains.h"
#include "worker/runner_supervisor.h"

namespace tf::worker {
namespace {

constexpr const char* kVersion = "0.1.0";
constexpr auto kRpcTimeout = std::chrono::seconds(10);
constexpr auto kArtifactTimeout = std::chrono::minutes(5);
// How long a stopping worker keeps trying to deliver results.
constexpr auto kDrainTimeout = std::chrono::seconds(10);

// How long a call waits for one of several coordinator addresses to
// connect (a standby taking over); the callers retry after that.
constexpr auto kTakeoverWait = std::chrono::seconds(2);

// The worker's channel settings: the clients' (a restarted coordinator is
// found again within about a second), and keepalive pings, so that a
// coordinator gone without a word is noticed while the worker waits.
grpc::ChannelArguments ChannelArgs() {
  grpc::ChannelArguments args = client::CoordinatorChannelArgs();
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 10000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 5000);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  return args;
}

std::unique_ptr<grpc::ClientContext> MakeContext(std::chrono::milliseconds timeout,
                                                 const std::string& token) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + timeout);
  auth::AttachToken(*context, token);
  return context;
}

Status FromGrpc(const grpc::Status& status, const std::string& address) {
  if (status.ok()) return Status::Ok();
  if (status.error_code() == grpc::StatusCode::UNAVAILABLE) {
    return Status::Unavailable("cannot reach coordinator at " + address + ": " +
                               status.error_message());
  }
  if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    return Status::DeadlineExceeded("coordinator at " + address + " did not answer in time");
  }
  // The code is kept: a report refused with PERMISSION_DENIED is dropped, not
  // retried (ResultReporter), and a worker id refused so registers anew.
  return Status(CodeFromGrpc(status.error_code()),
                "coordinator at " + address + ": " + status.error_message());
}

std::string Hostname() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

v1::CandidateResult FailedResult(int64_t candidate_id, const std::string& error) {
  v1::CandidateResult result;
  result.set_candidate_id(candidate_id);
  result.set_status(v1::RESULT_STATUS_RUNTIME_FAILED);
  result.set_error(error);
  return result;
}

}  // namespace

Result<std::unique_ptr<Worker>> Worker::Create(WorkerOptions options) {
  if (options.coordinator.empty()) return Status::InvalidArgument("--coordinator is required");
  if (options.cache_dir.empty()) return Status::InvalidArgument("--cache is required");
  if (options.max_candidates < 1) {
    return Status::InvalidArgument("--max-candidates must be at least 1, got " +
                                   std::to_string(options.max_candidates));
  }
  if (options.runner_path.empty()) options.runner_path = ExecutableDir() + "/tunefleet-runner";
  if (access(options.runner_path.c_str(), X_OK) != 0) {
    return Status::NotFound("runner '" + options.runner_path +
                            "' is not an executable file; pass --runner PATH");
  }
  TF_RETURN_IF_ERROR(MakeDirs(options.cache_dir));
  // Absolute: the compilers and runners it starts work in folders of their
  // own, where a relative path would name nothing.
  std::filesystem::path cache = std::filesystem::absolute(options.cache_dir).lexically_normal();
  options.cache_dir = (cache.has_filename() ? cache : cache.parent_path()).string();
  TF_ASSIGN_OR_RETURN(auto credentials, auth::MakeChannelCredentials(options.tls));
  TF_ASSIGN_OR_RETURN(auto devices,
                      DiscoverDevices(options.devices, options.label, options.replay_speed));
  TF_ASSIGN_OR_RETURN(DeviceLocks locks, DeviceLocks::Take(devices, options.lock_dir));
  if (locks.size() > 0) spdlog::info("holding {} device locks in {}", locks.size(), locks.dir());
  std::map<std::string, std::map<std::string, std::string>> toolchains;  // by vendor
  for (Device& device : devices) {
    auto [vendor, inserted] = toolchains.try_emplace(device.info.vendor());
    if (inserted) vendor->second = vendors::ToolchainVersions(device.info.vendor());
    device.info.mutable_toolchains()->insert(vendor->second.begin(), vendor->second.end());
    // A runner computing in host memory can use no more than its memory
    // limit: that is the device's memory as far as jobs are concerned.
    auto& properties = *device.info.mutable_properties();
    TF_ASSIGN_OR_RETURN(const vendors::DeviceKind* kind,
                        vendors::FindDeviceKind(device.info.vendor()));
    if (kind->shares_host_memory && options.sandbox_runners && options.runner_memory_mb > 0 &&
        properties.contains("memory_bytes")) {
      properties["memory_bytes"] = std::min<int64_t>(
          properties["memory_bytes"], static_cast<int64_t>(options.runner_memory_mb << 20));
      device.info.set_memory_bytes(properties["memory_bytes"]);
    }
  }
  TF_ASSIGN_OR_RETURN(auto channels, client::CoordinatorChannels::Make(options.coordinator,
                                                                       credentials, ChannelArgs()));
  TF_ASSIGN_OR_RETURN(auto bundles, BundleBuilder::Open(options.cache_dir + "/built"));
  return std::unique_ptr<Worker>(new Worker(std::move(options), std::move(devices),
                                            std::move(locks), std::move(channels),
                                            std::move(bundles)));
}

std::unique_ptr<v1::WorkerService::Stub> Worker::Stub() {
  return v1::WorkerService::NewStub(channels_->Pick(kTakeoverWait));
}

Worker::Worker(WorkerOptions options, std::vector<Device> devices, DeviceLocks locks,
               std::unique_ptr<client::CoordinatorChannels> channels,
               std::unique_ptr<BundleBuilder> bundles)
    : options_(std::move(options)),
      devices_(std::move(devices)),
      locks_(std::move(locks)),
      channels_(std::move(channels)),
      artifacts_(options_.cache_dir,
                 [this](const std::string& sha, const std::string& path) {
                   return FetchArtifact(sha, path);
                 }),
      bundles_(std::move(bundles)),
      reporter_(std::make_unique<ResultReporter>(
          [this](v1::ReportResultsRequest& request) { return SendResults(request); },
          [this](int64_t lease_id) {
            std::lock_guard lock(mu_);
            cancelled_leases_.insert(lease_id);
          })) {}

std::string Worker::worker_id() {
  std::lock_guard lock(mu_);
  return worker_id_;
}

void Worker::Shutdown() {
  stopping_ = true;
  std::lock_guard lock(mu_);
  stop_changed_.notify_all();
}

bool Worker::SleepUnlessStopping(std::chrono::milliseconds duration) {
  std::unique_lock lock(mu_);
  return !stop_changed_.wait_for(lock, duration, [this] { return stopping_.load(); });
}

Status Worker::Register() {
  v1::RegisterRequest request;
  request.set_hostname(Hostname());
  request.set_version(kVersion);
  for (const Device& device : devices_) *request.add_devices() = device.info;
  request.set_previous_worker_id(worker_id());
  Backoff backoff(std::chrono::milliseconds(200), std::chrono::seconds(5));
  for (int attempt = 0;; ++attempt) {
    v1::RegisterResponse response;
    auto context = MakeContext(kRpcTimeout, options_.token);
    Status status =
        FromGrpc(Stub()->Register(context.get(), request, &response), options_.coordinator);
    if (status.ok()) {
      std::lock_guard lock(mu_);
      worker_id_ = response.worker_id();
      if (response.heartbeat_interval_ms() > 0) {
        heartbeat_interval_ = std::chrono::milliseconds(response.heartbeat_interval_ms());
      }
      spdlog::info("registered with coordinator {} as worker {} ({}, heartbeat every {} ms)",
                   options_.coordinator, worker_id_, CountText(devices_.size(), "device"),
                   heartbeat_interval_.count());
      return Status::Ok();
    }
    if (status.code() == Code::kPermissionDenied && !request.previous_worker_id().empty()) {
      // The old id is another token's now (or from before tokens): start
      // over under a new one.
      spdlog::warn("cannot register as worker {} again: {}; registering under a new id",
                   request.previous_worker_id(), status.message());
      request.clear_previous_worker_id();
      continue;
    }
    if (status.code() == Code::kUnauthenticated || status.code() == Code::kPermissionDenied) {
      return status;
    }
    auto wait = backoff.Next();
    if (attempt % 10 == 0) {
      spdlog::warn("cannot register: {}; retrying every {} ms or less", status.message(),
                   wait.count());
    }
    if (!SleepUnlessStopping(wait)) return Status(Code::kCancelled, "shut down before registering");
  }
}

void Worker::HeartbeatLoop() {
  bool reachable = true;
  while (SleepUnlessStopping(std::chrono::milliseconds(heartbeat_interval_))) {
    v1::HeartbeatRequest request;
    {
      std::lock_guard lock(mu_);
      request.set_worker_id(worker_id_);
      for (int64_t id : leases_in_progress_) request.add_lease_ids(id);
    }
    v1::HeartbeatResponse response;
    std::shared_ptr<grpc::Channel> channel = channels_->Pick(kTakeoverWait);
    // Unreachable, the worker waits up to one interval for the connection
    // (a call would fail at once) and heartbeats as soon as it is up. The
    // call itself has the usual time, for a coordinator up but slow to answer.
    if (!reachable &&
        !channel->WaitForConnected(std::chrono::system_clock::now() + heartbeat_interval_)) {
      continue;
    }
    auto context = MakeContext(kRpcTimeout, options_.token);
    Status status =
        FromGrpc(v1::WorkerService::NewStub(channel)->Heartbeat(context.get(), request, &response),
                 options_.coordinator);
    // Refused: another token's id now (registering again gets a new one), or
    // the token revoked (registering again is refused, which stops the worker).
    const bool disowned =
        status.code() == Code::kPermissionDenied || status.code() == Code::kUnauthenticated;
    if (!status.ok() && !disowned) {
      if (reachable) spdlog::warn("heartbeat failed: {}", status.message());
      reachable = false;
      continue;
    }
    const bool back = !reachable;
    if (back) spdlog::info("coordinator {} answers again", options_.coordinator);
    reachable = true;
    if (response.reregister() || disowned) {
      spdlog::warn("coordinator does not know worker {} as ours ({}); registering again",
                   request.worker_id(), disowned ? status.message() : "forgotten");
      if (Status registered = Register(); !registered.ok()) {
        if (registered.code() != Code::kCancelled) {
          spdlog::error("cannot register again: {}; stopping", registered.message());
          refusal_ = registered;
          Shutdown();
        }
        return;
      }
    }
    // The results that waited go now, before their leases expire.
    if (back) reporter_->RetryNow();
    std::lock_guard lock(mu_);
    cancelled_leases_.insert(response.cancelled_lease_ids().begin(),
                             response.cancelled_lease_ids().end());
  }
}

Status Worker::FetchArtifact(const std::string& sha256, const std::string& path) {
  v1::FetchArtifactRequest request;
  request.set_sha256(sha256);
  auto context = MakeContext(kArtifactTimeout, options_.token);
  auto stub = Stub();  // outlives the stream
  auto stream = stub->FetchArtifact(context.get(), request);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Status::Internal("cannot write " + path);
  v1::ArtifactChunk chunk;
  while (stream->Read(&chunk)) out.write(chunk.data().data(), chunk.data().size());
  out.close();
  TF_RETURN_IF_ERROR(FromGrpc(stream->Finish(), options_.coordinator));
  if (!out) return Status::Internal("cannot write " + path);
  return Status::Ok();
}

Result<v1::ReportResultsResponse> Worker::SendResults(v1::ReportResultsRequest& request) {
  request.set_worker_id(worker_id());
  v1::ReportResultsResponse response;
  auto context = MakeContext(kRpcTimeout, options_.token);
  TF_RETURN_IF_ERROR(
      FromGrpc(Stub()->ReportResults(context.get(), request, &response), options_.coordinator));
  return response;
}

Status Worker::RunLease(const Device& device, RunnerSupervisor& supervisor,
                        const v1::Lease& lease) {
  const int index = device.info.index();
  spdlog::info("device {}: {} {} of job {}: {} candidates", index,
               lease.retime() ? "retime lease" : "lease", lease.lease_id(), lease.job_id(),
               lease.candidates_size());
  auto report = [&](v1::CandidateResult result) {
    reporter_->Add(lease.lease_id(), index, std::move(result));
  };
  // Local copies by hash, in the candidates' order: one, or a retime
  // lease's several.
  std::vector<std::pair<std::string, std::string>> artifacts;
  std::vector<v1::WorkerBuild> builds;  // bundles built for this lease, told with its end
  Status fetched = Status::Ok();
  Status ran = Status::Ok();
  for (const auto& c : lease.candidates()) {
    const std::string& sha256 = runner::ArtifactOf(lease, c);
    if (!fetched.ok() || std::any_of(artifacts.begin(), artifacts.end(),
                                     [&](const auto& a) { return a.first == sha256; })) {
      continue;
    }
    auto artifact = artifacts_.Get(sha256);
    if (artifact.ok()) {
      artifacts.emplace_back(sha256, *artifact);
    } else {
      fetched = artifact.status();
    }
  }
  if (!fetched.ok()) {
    const Code code = fetched.code();
    spdlog::error("device {}: lease {}: {}", index, lease.lease_id(), fetched.message());
    // An unreachable coordinator says nothing about the candidates: the
    // lease is handed back unrun. Anything else fails them with the reason.
    if (code != Code::kUnavailable && code != Code::kDeadlineExceeded) {
      for (const auto& c : lease.candidates()) {
        report(FailedResult(c.candidate_id(), fetched.message()));
      }
    }
  } else if (lease.build_on_worker()) {
    ran = RunBundleLease(device, supervisor, lease,
                         std::map<std::string, std::string>(artifacts.begin(), artifacts.end()),
                         report, &builds);
  } else {
    std::vector<std::string> paths;
    for (const auto& [sha256, path] : artifacts) paths.push_back(path);
    ran =
        supervisor.RunLease(lease, paths, report, [&] { return LeaseCancelled(lease.lease_id()); });
  }
  reporter_->FinishLease(lease.lease_id(), index, std::move(builds));
  if (ran.code() != Code::kCancelled) return ran;
  spdlog::info("device {}: lease {}: {}", index, lease.lease_id(), ran.message());
  return Status::Ok();
}

bool Worker::LeaseCancelled(int64_t lease_id) {
  if (stopping_) return true;
  std::lock_guard lock(mu_);
  return cancelled_leases_.contains(lease_id);
}

Status Worker::RunBundleLease(const Device& device, RunnerSupervisor& supervisor,
                              const v1::Lease& lease,
                              const std::map<std::string, std::string>& bundle_paths,
                              const std::function<void(v1::CandidateResult)>& report,
                              std::vector<v1::WorkerBuild>* builds) {
  const int index = device.info.index();
  const kernelspec::DeviceProperties limits(device.info.properties().begin(),
                                            device.info.properties().end());
  std::map<std::string, Result<std::shared_ptr<const BuiltBundle>>> bundles;  // by hash
  std::map<std::string, v1::Lease> runs;                                      // by built artifact
  std::map<int64_t, v1::ResourceUsage> resources;
  for (const auto& c : lease.candidates()) {
    v1::CandidateResult result;
    result.set_candidate_id(c.candidate_id());
    const std::string& bundle = runner::ArtifactOf(lease, c);
    auto built = bundles.find(bundle);
    if (built == bundles.end()) {
      std::optional<compiler::BuildStats> built_now;
      built = bundles
                  .emplace(bundle, bundles_->Get(bundle, bundle_paths.at(bundle),
                                                 device.info.arch(), &built_now))
                  .first;
      if (built_now) {
        v1::WorkerBuild& b = builds->emplace_back();
        b.set_configs(built_now->configs);
        b.set_failed_configs(built_now->failed_configs);
        b.set_compiler_runs(built_now->compiler_runs);
        b.set_wall_seconds(built_now->wall_seconds);
        b.set_cpu_seconds(built_now->cpu_seconds);
      }
      if (!built->second.ok()) {
        spdlog::error("device {}: lease {}: {}", index, lease.lease_id(),
                      built->second.status().message());
      }
    }
    if (!built->second.ok()) {
      result.set_status(v1::RESULT_STATUS_COMPILE_FAILED);
      result.set_error(built->second.status().message());
      report(std::move(result));
      continue;
    }
    const BuiltBundle& batch = **built->second;
    auto b = batch.by_config.find(kernelspec::ConfigKey(c.config()));
    if (b == batch.by_config.end()) {
      result.set_status(v1::RESULT_STATUS_COMPILE_FAILED);
      result.set_error("configuration " + kernelspec::ConfigKey(c.config()) +
                       " is not in the lease's batch");
      report(std::move(result));
      continue;
    }
    const compiler::ConfigBuild& build = b->second;
    *result.mutable_resources() = build.resources;
    if (!build.ok) {
      result.set_status(v1::RESULT_STATUS_COMPILE_FAILED);
      result.set_error(build.diagnostics);
      report(std::move(result));
      continue;
    }
    Status fits = batch.toolchain->CheckResources(lease.spec(), c.config(), c.problem(),
                                                  build.resources, limits);
    if (!fits.ok()) {
      result.set_status(v1::RESULT_STATUS_PRUNED);
      result.set_error(fits.message());
      report(std::move(result));
      continue;
    }
    // A retime lease's finalists run together, whatever artifact holds them.
    v1::Lease& run = runs[lease.retime() ? std::string() : build.artifact_sha256];
    if (run.candidates().empty()) {
      run = lease;
      run.clear_candidates();
      run.set_artifact_sha256(build.artifact_sha256);
      run.set_reference_symbol(build.reference_symbol);
    }
    v1::LeasedCandidate* leased = run.add_candidates();
    *leased = c;
    leased->set_symbol(build.symbol);
    leased->set_artifact_sha256(build.artifact_sha256);
    resources[c.candidate_id()] = build.resources;
  }
  auto report_with_resources = [&](v1::CandidateResult result) {
    *result.mutable_resources() = resources[result.candidate_id()];
    report(std::move(result));
  };
  for (const auto& [key, run] : runs) {
    std::vector<std::string> paths;
    for (const auto& c : run.candidates()) {
      const std::string path = bundles_->ArtifactPath(c.artifact_sha256());
      if (std::find(paths.begin(), paths.end(), path) == paths.end()) paths.push_back(path);
    }
    TF_RETURN_IF_ERROR(supervisor.RunLease(run, paths, report_with_resources,
                                           [&] { return LeaseCancelled(lease.lease_id()); }));
  }
  return Status::Ok();
}

void Worker::DeviceLoop(const Device& device) {
  RunnerSandbox sandbox;
  sandbox.enabled = options_.sandbox_runners;
  sandbox.work_dir = options_.cache_dir + "/runners/device-" + std::to_string(device.info.index());
  sandbox.memory_mb = options_.runner_memory_mb;
  sandbox.file_mb = options_.runner_file_mb;
  RunnerSupervisor supervisor(options_.runner_path, device, sandbox);
  Backoff backoff(std::chrono::milliseconds(200), std::chrono::seconds(5));
  // Between leases this device could not run: its runner may never start.
  Backoff unable(std::chrono::seconds(1), std::chrono::seconds(60));
  while (!stopping_) {
    v1::AcquireLeaseRequest request;
    request.set_worker_id(worker_id());
    request.set_device_index(device.info.index());
    request.set_max_candidates(options_.max_candidates);
    request.set_wait_ms(options_.lease_wait_ms);
    v1::AcquireLeaseResponse response;
    auto context = MakeContext(std::chrono::milliseconds(options_.lease_wait_ms) + kRpcTimeout,
                               options_.token);
    Status status =
        FromGrpc(Stub()->AcquireLease(context.get(), request, &response), options_.coordinator);
    if (!status.ok()) {
      spdlog::debug("device {}: no lease: {}", device.info.index(), status.message());
      SleepUnlessStopping(backoff.Next());
      continue;
    }
    backoff.Reset();
    if (!response.has_lease()) continue;
    const int64_t lease_id = response.lease().lease_id();
    {
      std::lock_guard lock(mu_);
      leases_in_progress_.insert(lease_id);
    }
    Status ran = RunLease(device, supervisor, response.lease());
    {
      std::lock_guard lock(mu_);
      leases_in_progress_.erase(lease_id);
      cancelled_leases_.erase(lease_id);
    }
    if (ran.ok()) {
      unable.Reset();
    } else {
      const auto wait = unable.Next();
      spdlog::error(
          "device {}: cannot run lease {} (its candidates without a result go back): {}; next try "
          "in {} ms",
          device.info.index(), lease_id, ran.message(),
          std::chrono::duration_cast<std::chrono::milliseconds>(wait).count());
      SleepUnlessStopping(wait);
    }
  }
}

Status Worker::Run() {
  spdlog::info("worker: {}, coordinator {}, cache {}", CountText(devices_.size(), "device"),
               options_.coordinator, options_.cache_dir);
  for (const Device& device : devices_) {
    std::string compilers;
    for (const auto& [language, version] : device.info.toolchains()) {
      compilers += "; builds " + language + " with " + version;
    }
    // GPU and replay devices have no cores of their own.
    const std::string cores =
        device.cpus.empty() ? "" : " (" + CountText(device.cpus.size(), "core") + ")";
    spdlog::info("device {}: {}{}{}", device.info.index(), device.info.device_class(), cores,
                 compilers);
  }
  if (Status registered = Register(); !registered.ok()) {
    // Stopped (SIGTERM, SIGINT) while no coordinator answered: a clean stop.
    if (registered.code() == Code::kCancelled) {
      spdlog::info("{}", registered.message());
      return Status::Ok();
    }
    return registered;
  }
  std::thread heartbeat([this] { HeartbeatLoop(); });
  std::vector<std::thread> device_threads;
  for (const Device& device : devices_) {
    device_threads.emplace_back([this, &device] { DeviceLoop(device); });
  }
  for (auto& thread : device_threads) thread.join();
  heartbeat.join();
  spdlog::info("stopping: delivering the results still queued");
  if (size_t lost = reporter_->Drain(kDrainTimeout); lost > 0) {
    spdlog::error("{} results could not be delivered to {}; their leases will expire and run again",
                  lost, options_.coordinator);
  }
  return refusal_;
}

}  // namespace tf::worker
