// tunefleet-runner: the per-device child of tunefleet-worker. Reads
// RunnerRequests from stdin and answers with RunnerEvents on stdout (framed,
// see runner_protocol.h) until stdin closes.
//
//   tunefleet-runner --work-dir DIR [--sandbox KIND --memory-mb N --file-mb N]
//
// With --sandbox it confines itself as its device kind says (RunnerSandbox in
// runner_supervisor.h, vendors/device_kinds.h) before reading the first request, so that no
// candidate runs unconfined.
#include <sched.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "common/sanitizer.h"
#include "runner/runner.h"
#include "runner/runner_protocol.h"
#include "sandbox/sandbox.h"
#include "vendors/device_kinds.h"

#if TF_ASAN
// In sanitizer builds a faulting candidate must still die of its signal, as
// the supervisor reports it, and the leak check at exit would need ptrace,
// which the sandbox refuses.
extern "C" const char* __asan_default_options() { return "handle_segv=0:detect_leaks=0"; }
#endif

namespace {

struct Flags {
  std::string work_dir;
  std::string sandbox;  // empty or the device kind whose runner this is
  uint64_t memory_mb = 0;
  uint64_t file_mb = 0;
};

bool ParseFlags(int argc, char** argv, Flags* flags) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const char* value = argv[i + 1];
    if (flag == "--work-dir") {
      flags->work_dir = value;
    } else if (flag == "--sandbox" && *value != '\0') {
      flags->sandbox = value;
    } else if (flag == "--memory-mb") {
      flags->memory_mb = std::strtoull(value, nullptr, 10);
    } else if (flag == "--file-mb") {
      flags->file_mb = std::strtoull(value, nullptr, 10);
    } else {
      return false;
    }
  }
  return argc % 2 == 1;
}

// Every runner: the system libraries, its own folder, a file size limit; the
// device kind adds what its runners need (vendors/device_kinds.h).
tf::Status EnterSandbox(const Flags& flags) {
  tf::sandbox::Policy policy;
  policy.read_paths = tf::sandbox::SystemReadPaths();
  policy.write_paths = {"/dev/null"};
  policy.work_dir = flags.work_dir;
  policy.max_file_bytes = flags.file_mb << 20;
  const uint64_t physical = static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) *
                            static_cast<uint64_t>(sysconf(_SC_PAGE_SIZE));
  // AddressSanitizer reserves terabytes of shadow memory.
  const uint64_t memory = TF_ASAN ? 0 : flags.memory_mb > 0 ? flags.memory_mb << 20 : physical;
  TF_ASSIGN_OR_RETURN(const tf::vendors::DeviceKind* kind,
                      tf::vendors::FindDeviceKind(flags.sandbox));
  kind->confine_runner(memory, policy);
  TF_ASSIGN_OR_RETURN(auto applied, tf::sandbox::Enter(policy));
  spdlog::info("sandboxed in {}: {}", flags.work_dir, applied.Describe());
  return tf::Status::Ok();
}

tf::Status PinToCpus(const google::protobuf::RepeatedField<int32_t>& cpus) {
  if (cpus.empty()) return tf::Status::Ok();
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : cpus) CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) {
    return tf::Status::Internal("sched_setaffinity to the device's cores failed");
  }
  return tf::Status::Ok();
}

constexpr const char* kUsage =
    "usage: tunefleet-runner [--work-dir DIR] [--sandbox KIND] [--memory-mb N] [--file-mb N]";

}  // namespace

int main(int argc, char** argv) {
  const bool help =
      argc == 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0);
  // Started by hand, it would wait on the terminal for framed requests.
  if (help || isatty(STDIN_FILENO)) {
    std::printf(
        "tunefleet-runner: the per-device child process of tunefleet-worker, which starts it "
        "(beside itself, or --runner): it reads framed requests on stdin and answers on stdout "
        "until stdin closes. Not a command for people; run tunefleet-worker.\n%s\n",
        kUsage);
    return help ? 0 : 2;
  }
  // Kernels may print; keep stdout for frames only and send prints to stderr.
  const int events_fd = dup(STDOUT_FILENO);
  dup2(STDERR_FILENO, STDOUT_FILENO);
  spdlog::set_pattern("[%Y-%m-%d %H:%M:%S.%e] [runner %P] [%l] %v");
  Flags flags;
  if (!ParseFlags(argc, argv, &flags)) {
    spdlog::error(kUsage);
    return 2;
  }
  if (!flags.sandbox.empty()) {
    if (auto entered = EnterSandbox(flags); !entered.ok()) {
      spdlog::error("cannot confine the runner: {}", entered.message());
      return 1;
    }
  } else if (!flags.work_dir.empty() && chdir(flags.work_dir.c_str()) != 0) {
    spdlog::error("cannot enter {}: {}", flags.work_dir, std::strerror(errno));
    return 1;
  }

  tf::runner::Runner runner;
  auto sink = [events_fd](const tunefleet::v1::RunnerEvent& event) {
    return tf::runner::WriteMessage(events_fd, event);
  };
  while (true) {
    tunefleet::v1::RunnerRequest request;
    auto read = tf::runner::ReadMessage(STDIN_FILENO, &request);
    if (!read.ok()) {
      spdlog::error("reading request: {}", read.status().ToString());
      return 1;
    }
    if (!*read) return 0;  // the worker closed our stdin: done
    if (auto pinned = PinToCpus(request.cpus()); !pinned.ok()) {
      spdlog::warn("{}; running unpinned", pinned.message());
    }
    if (auto status = runner.Run(request, sink); !status.ok()) {
      spdlog::error("lease {}: {}", request.lease().lease_id(), status.ToString());
      return 1;
    }
  }
}
