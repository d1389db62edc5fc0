// tunefleet-runner: the per-device child of tunefleet-worker. Reads
// RunnerRequests from stdin and answers with RunnerEvents on stdout (framed,
// see runner_protocol.h) until stdin closes.
#include <sched.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "worker/runner.h"
#include "worker/runner_protocol.h"

namespace {

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

}  // namespace

int main() {
  // Kernels may print; keep stdout for frames only and send prints to stderr.
  const int events_fd = dup(STDOUT_FILENO);
  dup2(STDERR_FILENO, STDOUT_FILENO);
  spdlog::set_pattern("[%Y-%m-%d %H:%M:%S.%e] [runner %P] [%l] %v");

  tf::worker::Runner runner;
  auto sink = [events_fd](const tunefleet::v1::RunnerEvent& event) {
    return tf::worker::WriteMessage(events_fd, event);
  };
  while (true) {
    tunefleet::v1::RunnerRequest request;
    auto read = tf::worker::ReadMessage(STDIN_FILENO, &request);
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
