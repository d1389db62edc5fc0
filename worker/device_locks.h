// Host-wide exclusive locks on what a worker's devices time on, held for as
// long as the worker runs, so that two workers on one host never time on the
// same cores or GPU at once (their timings would corrupt each other). A device
// pinned to cores locks each core; a GPU locks its host id (runner::Device); a device with
// neither (a replay device) locks nothing. Each lock is flock(2) on a file in
// a folder every worker of the host shares, holding its holder's pid; the
// kernel drops it when the worker dies, however it dies, so a crashed worker
// never blocks the next one.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "runner/device.h"

namespace tf::worker {

class DeviceLocks {
 public:
  // Every worker's default folder: /run/lock/tunefleet where this process can
  // make or write it, else /tmp/tunefleet-locks; empty when neither.
  static std::string DefaultDir();

  // Takes every lock of `devices` in `dir` (DefaultDir() when empty), made if
  // missing and open to every user (mode 1777, as /tmp) so that workers of
  // all users share it. Unavailable when another process holds one, naming
  // the device, that process's pid and how to give each worker its own
  // devices; nothing is held then. Without `dir` and a default folder, a
  // warning and no locks.
  static Result<DeviceLocks> Take(const std::vector<runner::Device>& devices, std::string dir);

  DeviceLocks() = default;
  DeviceLocks(DeviceLocks&& other) noexcept;
  ~DeviceLocks();  // releases them

  const std::string& dir() const { return dir_; }  // empty: no locks
  size_t size() const { return fds_.size(); }

 private:
  void Release();

  std::string dir_;
  std::vector<int> fds_;
};

}  // namespace tf::worker
