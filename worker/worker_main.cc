// tunefleet-worker: the daemon on a benchmarking host.
//   tunefleet-worker --coordinator HOST:PORT --devices cpu:2 --cache DIR
#include <signal.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
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
      "kinds.\nEach worker locks the cores and GPUs it times on for as long as it runs: a second "
      "worker of this host asking for one of them exits 75, naming the first one's pid. To run "
      "several on one host, give each its own cores (taskset -c 0-3 tunefleet-worker ... "
      "--devices cpu:2) or GPUs (--devices KIND:N).\nExit codes: 0 shut down by SIGINT or "
      "SIGTERM, 1 error, 2 usage, 5 the coordinator refused the token (none, unknown, revoked, or "
      "not a worker's), 75 a device --devices names is not there yet (a GPU driver not up) or "
      "another worker of this host is using it: try again later."};
  app.add_option("--coordinator", options.coordinator,
                 "coordinator address HOST:PORT, or several separated by commas (a coordinator "
                 "and its standbys: the worker follows the one that serves)")
      ->envname("TUNEFLEET_COORDINATOR")
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
                 "--role worker`)")
      ->envname("TUNEFLEET_TOKEN_FILE");
  app.add_option("--lock-dir", options.lock_dir,
                 "folder of the host-wide device locks, shared by every worker of this host "
                 "(default /run/lock/tunefleet where writable, else /tmp/tunefleet-locks); "
                 "workers locking in different folders do not see each other");
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
      // Name where the path came from, as the CLI does: an exported
      // TUNEFLEET_TOKEN_FILE is easy to forget.
      const char* from_env = std::getenv("TUNEFLEET_TOKEN_FILE");
      spdlog::error(
          "{}: {}",
          from_env != nullptr && token_file == from_env ? "TUNEFLEET_TOKEN_FILE" : "--token-file",
          token.status().message());
      return 2;
    }
    options.token = *token;
  } else {
    // The worker reads no TUNEFLEET_TOKEN (the coordinator's refusal suggests
    // it, for the CLI and Python), so this says early what it needs.
    spdlog::warn(
        "no --token-file or TUNEFLEET_TOKEN_FILE: only a coordinator started with "
        "--allow-anonymous will take this worker; give it a worker token (tunefleet token "
        "create --role worker) in a file");
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
    // EX_TEMPFAIL: a supervisor restarts it until the driver is up or the
    // other worker holding its devices has stopped (a manual one beside the
    // service), where a bad flag (2) would fail the same way every time.
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
