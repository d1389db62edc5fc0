// tunefleet-worker: the daemon on a benchmarking host.
//   tunefleet-worker --coordinator HOST:PORT --devices cpu:2 --cache DIR
#include <signal.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <thread>

#include "auth/token_file.h"
#include "common/daemon_flags.h"
#include "common/flag_checks.h"
#include "vendors/device_kinds.h"
#include "worker/worker.h"

int main(int argc, char** argv) {
  tf::worker::WorkerOptions options;
  CLI::App app{
      "TuneFleet worker: benchmarks candidates on this host's devices for a coordinator.\n"
      "Example: tunefleet-worker --coordinator 127.0.0.1:50051 --devices cpu:2 --cache "
      "worker-cache/ --token-file worker.token\n"
      "The token comes from `tunefleet token create --role worker`; --devices lists the device "
      "kinds.\nExit codes: 0 shut down by SIGINT or SIGTERM, 1 error, 2 usage, 5 the coordinator "
      "refused the token (none, unknown, revoked, or not a worker's), 75 no device --devices "
      "names is there yet (a GPU driver not up: try again later)."};
  app.add_option("--coordinator", options.coordinator,
                 "coordinator address HOST:PORT, or several separated by commas (a coordinator "
                 "and its standbys: the worker follows the one that serves)")
      ->required();
  std::vector<std::string> devices;
  app.add_option("--devices", devices,
                 "devices to offer (default cpu:1; repeatable), kinds joined by commas: " +
                     tf::vendors::DeviceKindsUsage());
  app.add_option("--replay-speed", options.replay_speed,
                 "replay devices sleep the recorded compile and run times times this: 0 (none) "
                 "or from 0.001 to 1e6")
      ->capture_default_str()
      ->check(tf::kNonNegative);
  app.add_option("--cache", options.cache_dir, "directory for downloaded artifacts")->required();
  app.add_option("--label", options.label, "label added to every device and its device class");
  app.add_option("--max-candidates", options.max_candidates, "candidates per lease")
      ->capture_default_str();
  app.add_option("--runner", options.runner_path,
                 "runner binary (default: tunefleet-runner beside this one)");
  app.add_option("--tls-ca", options.tls.ca_file,
                 "CA (PEM) of the coordinator's TLS certificate; without it, plaintext");
  app.add_option("--tls-cert", options.tls.cert_file,
                 "this worker's certificate (PEM), for a coordinator that requires one");
  app.add_option("--tls-key", options.tls.key_file, "private key of --tls-cert (PEM)");
  std::string token_file;
  app.add_option("--token-file", token_file,
                 "file holding this worker's bearer token (role worker: `tunefleet token create "
                 "--role worker`)");
  bool no_sandbox = false;
  app.add_flag("--no-runner-sandbox", no_sandbox,
               "run candidates unconfined (own folder only): network, other files and new "
               "processes stay reachable; for debugging a kernel, never for untrusted jobs");
  app.add_option("--runner-memory-mb", options.runner_memory_mb,
                 "memory of each runner, MiB: address space for CPU runners, private writable "
                 "memory for GPU runners (0: the host's physical memory)")
      ->capture_default_str();
  app.add_option("--runner-file-mb", options.runner_file_mb, "largest file a runner may write, MiB")
      ->capture_default_str();
  bool verbose = false;
  app.add_flag("-v,--verbose", verbose, "debug logs");
  if (std::optional<int> exit_code = tf::ParseDaemonFlags(app, argc, argv)) return *exit_code;
  if (verbose) spdlog::set_level(spdlog::level::debug);
  options.sandbox_runners = !no_sandbox;
  if (!devices.empty()) {
    options.devices.clear();
    for (const std::string& d : devices)
      options.devices += (options.devices.empty() ? "" : ",") + d;
  }
  if (!token_file.empty()) {
    auto token = tf::auth::ReadTokenFile(token_file);
    if (!token.ok()) {
      spdlog::error("--token-file: {}", token.status().message());
      return 2;
    }
    options.token = *token;
  } else {
    // The worker reads no TUNEFLEET_TOKEN (the coordinator's refusal suggests
    // it, for the CLI), so this says early what it needs.
    spdlog::warn(
        "no --token-file: only a coordinator started with --allow-anonymous will take this "
        "worker; give it a worker token (tunefleet token create --role worker)");
  }

  // Signals are taken by one thread; every other thread starts with them blocked.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto worker = tf::worker::Worker::Create(options);
  if (!worker.ok()) {
    spdlog::error("{}", worker.status().message());
    // EX_TEMPFAIL: a supervisor restarts it until the driver is up, where a
    // bad flag (2) would fail the same way every time.
    return worker.status().code() == tf::Code::kUnavailable ? 75 : 2;
  }
  std::thread([&signals, w = worker->get()] {
    int signal = 0;
    sigwait(&signals, &signal);
    spdlog::info("{} received: shutting down", sigabbrev_np(signal));
    w->Shutdown();
  }).detach();
  tf::Status status = (*worker)->Run();
  if (!status.ok()) {
    spdlog::error("{}", status.message());
    const bool refused =
        status.code() == tf::Code::kUnauthenticated || status.code() == tf::Code::kPermissionDenied;
    return refused ? 5 : 1;
  }
  return 0;
}
