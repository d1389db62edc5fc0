#include "worker/device_locks.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <map>
#include <utility>

namespace tf::worker {
namespace {

constexpr char kRunLockDir[] = "/run/lock/tunefleet";
constexpr char kTmpLockDir[] = "/tmp/tunefleet-locks";

// What one lock stands for, as the message to another worker names it.
struct Lock {
  std::string what;  // "core 1 (cpu device 0)"
  std::string how;   // how to give each worker its own
};

std::string Errno() { return std::strerror(errno); }

// The folder, made if missing: sticky and writable by all, as /tmp, so that
// workers of every user lock in it and none removes another's files. A
// symbolic link is refused, so that nobody can point root's worker at
// another folder.
Result<int> OpenDir(const std::string& dir) {
  if (mkdir(dir.c_str(), 01777) == 0) {
    chmod(dir.c_str(), 01777);  // mkdir's mode went through the umask
  } else if (errno != EEXIST) {
    return Status::FailedPrecondition("cannot make lock folder " + dir + ": " + Errno());
  }
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return Status::FailedPrecondition("cannot open lock folder " + dir + ": " + Errno());
  return fd;
}

// The lock file `name` in `dir_fd`, made readable and writable by all (the
// next worker may be another user's). Without O_CREAT first: the kernel's
// protected_regular refuses O_CREAT on another user's file in a sticky
// folder, even to root.
int OpenLockFile(int dir_fd, const std::string& name) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    int fd = openat(dir_fd, name.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0 || errno != ENOENT) return fd;
    fd = openat(dir_fd, name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd >= 0) {
      fchmod(fd, 0666);
      return fd;
    }
    if (errno != EEXIST) return fd;  // else made meanwhile by another worker: open it
  }
  return -1;
}

// The pid the holder wrote, or "unknown" (it may not have written it yet).
std::string HolderPid(int fd) {
  char text[32] = {};
  ssize_t n = pread(fd, text, sizeof text - 1, 0);
  std::string pid(text, std::max<ssize_t>(n, 0));
  while (!pid.empty() && std::isspace(static_cast<unsigned char>(pid.back()))) pid.pop_back();
  bool number = !pid.empty() && std::all_of(pid.begin(), pid.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c));
  });
  return number ? pid : "unknown";
}

}  // namespace

std::string DeviceLocks::DefaultDir() {
  // The unit runs with ProtectSystem=strict but /run/lock writable, and a
  // private /tmp: /run/lock is what its worker shares with a manual one.
  for (const char* dir : {kRunLockDir, kTmpLockDir}) {
    Result<int> fd = OpenDir(dir);
    if (!fd.ok()) continue;
    const bool writable = faccessat(*fd, ".", W_OK, AT_EACCESS) == 0;
    close(*fd);
    if (writable) return dir;
  }
  return "";
}

Result<DeviceLocks> DeviceLocks::Take(const std::vector<runner::Device>& devices, std::string dir) {
  // By file name: a device listed twice locks once, and every worker takes
  // its locks in the same order, so of two that want the same cores one
  // gets them all rather than each a part.
  std::map<std::string, Lock> wanted;
  for (const runner::Device& device : devices) {
    const std::string of =
        " (" + device.info.vendor() + " device " + std::to_string(device.info.index()) + ")";
    for (int cpu : device.cpus) {
      wanted["core-" + std::to_string(cpu)] = {"core " + std::to_string(cpu) + of,
                                               "give each worker its own cores with taskset -c"};
    }
    if (!device.host_id.empty()) {
      std::string id = device.host_id;
      std::transform(id.begin(), id.end(), id.begin(),
                     [](unsigned char c) { return std::tolower(c); });
      wanted["gpu-" + id] = {"GPU " + id + of, "give each worker its own GPUs with --devices " +
                                                   device.info.vendor() + ":N"};
    }
  }
  DeviceLocks locks;
  if (wanted.empty()) return locks;
  locks.dir_ = dir.empty() ? DefaultDir() : std::move(dir);
  if (locks.dir_.empty()) {
    // A pod with a read-only root file system: Kubernetes keeps its pods
    // apart, so this is no reason to stop.
    spdlog::warn(
        "neither {} nor {} can be written: this worker's devices are not locked against "
        "other workers of this host (--lock-dir names a folder)",
        kRunLockDir, kTmpLockDir);
    return locks;
  }
  TF_ASSIGN_OR_RETURN(int dir_fd, OpenDir(locks.dir_));
  Status status;
  for (const auto& [name, lock] : wanted) {
    const std::string path = locks.dir_ + "/" + name;
    int fd = OpenLockFile(dir_fd, name);
    if (fd < 0) {
      status = Status::FailedPrecondition("cannot open lock file " + path + " for " + lock.what +
                                          ": " + Errno() + " (--lock-dir chooses the folder)");
      break;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const bool busy = errno == EWOULDBLOCK;
      status = busy ? Status::Unavailable("another tunefleet-worker (pid " + HolderPid(fd) +
                                          ") is using " + lock.what + ": " + lock.how +
                                          ", or stop that worker (lock file " + path + ")")
                    : Status::Internal("cannot lock " + path + ": " + Errno());
      close(fd);
      break;
    }
    locks.fds_.push_back(fd);
    const std::string pid = std::to_string(getpid()) + "\n";
    if (ftruncate(fd, 0) != 0 || pwrite(fd, pid.data(), pid.size(), 0) < 0) {
      // Not fatal: the lock holds; only another worker's message lacks the pid.
      spdlog::warn("cannot write this worker's pid to {}: {}", path, Errno());
    }
  }
  close(dir_fd);
  if (!status.ok()) return status;  // `locks` releases what it took
  return locks;
}

DeviceLocks::DeviceLocks(DeviceLocks&& other) noexcept
    : dir_(std::move(other.dir_)), fds_(std::exchange(other.fds_, {})) {}

DeviceLocks::~DeviceLocks() { Release(); }

void DeviceLocks::Release() {
  for (int fd : fds_) close(fd);
  fds_.clear();
}

}  // namespace tf::worker
