#include "sandbox/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>

namespace tf::sandbox {
namespace {

// Landlock's ABI, spelled out here: Debian 12's headers predate the network
// (ABI 4) and scope (ABI 6) parts. The kernel takes the struct's size, so a
// newer kernel reads only the fields of the ABI we ask for.
constexpr int kLandlockCreateRulesetVersion = 1;
constexpr int kLandlockRulePathBeneath = 1;
struct LandlockRulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};
struct __attribute__((packed)) LandlockPathBeneathAttr {
  uint64_t allowed_access;
  int32_t parent_fd;
};
constexpr uint64_t kFsExecute = 1ULL << 0;
constexpr uint64_t kFsWriteFile = 1ULL << 1;
constexpr uint64_t kFsReadFile = 1ULL << 2;
constexpr uint64_t kFsReadDir = 1ULL << 3;
constexpr uint64_t kFsTruncate = 1ULL << 14;  // ABI 3
constexpr uint64_t kFsIoctlDev = 1ULL << 15;  // ABI 5
constexpr uint64_t kFsFileRights = kFsExecute | kFsWriteFile | kFsReadFile | kFsTruncate |
                                   kFsIoctlDev;           // the rights a rule on a file may carry
constexpr uint64_t kNetBindTcp = 1ULL << 0;               // ABI 4
constexpr uint64_t kNetConnectTcp = 1ULL << 1;            // ABI 4
constexpr uint64_t kScopeAbstractUnixSocket = 1ULL << 0;  // ABI 6
constexpr uint64_t kScopeSignal = 1ULL << 1;              // ABI 6

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif

#if defined(__x86_64__)
constexpr uint32_t kAuditArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr uint32_t kAuditArch = AUDIT_ARCH_AARCH64;
#else
#error "the seccomp filter knows x86-64 and aarch64 only"
#endif

constexpr uid_t kNobody = 65534;

// File-system rights the kernel's Landlock ABI knows.
uint64_t HandledFsRights(int abi) {
  uint64_t rights = (1ULL << 13) - 1;  // ABI 1: execute .. make_sym
  if (abi >= 2) rights |= 1ULL << 13;  // refer
  if (abi >= 3) rights |= kFsTruncate;
  if (abi >= 5) rights |= kFsIoctlDev;
  return rights;
}

Status Errno(const std::string& what) {
  return Status::Internal("sandbox: " + what + ": " + std::strerror(errno));
}

// An owned file descriptor.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// Builds the ruleset; enforced later by landlock_restrict_self. Returns -1
// in *abi when the kernel has no Landlock.
Result<int> MakeRuleset(const Policy& policy, int* abi) {
  *abi = static_cast<int>(
      syscall(__NR_landlock_create_ruleset, nullptr, 0, kLandlockCreateRulesetVersion));
  if (*abi <= 0) {
    *abi = 0;
    return -1;
  }
  const uint64_t fs = HandledFsRights(*abi);
  LandlockRulesetAttr attr{fs, 0, 0};
  size_t attr_size = sizeof attr.handled_access_fs;
  if (*abi >= 4) {
    attr.handled_access_net = kNetBindTcp | kNetConnectTcp;  // and no rule grants either
    attr_size = offsetof(LandlockRulesetAttr, scoped);
  }
  if (*abi >= 6) {
    attr.scoped = kScopeAbstractUnixSocket | kScopeSignal;
    attr_size = sizeof attr;
  }
  int ruleset = static_cast<int>(syscall(__NR_landlock_create_ruleset, &attr, attr_size, 0));
  if (ruleset < 0) return Errno("landlock_create_ruleset");

  auto add = [&](const std::string& path, uint64_t rights) -> Status {
    Fd fd(open(path.c_str(), O_PATH | O_CLOEXEC));
    if (fd.get() < 0) return errno == ENOENT ? Status::Ok() : Errno("open " + path);
    struct stat st;
    if (fstat(fd.get(), &st) != 0) return Errno("stat " + path);
    LandlockPathBeneathAttr rule{rights & fs, fd.get()};
    if (!S_ISDIR(st.st_mode)) rule.allowed_access &= kFsFileRights;
    if (syscall(__NR_landlock_add_rule, ruleset, kLandlockRulePathBeneath, &rule, 0) != 0) {
      return Errno("landlock_add_rule " + path);
    }
    return Status::Ok();
  };
  Status status;
  for (const auto& path : policy.read_paths) {
    if (status.ok()) status = add(path, kFsExecute | kFsReadFile | kFsReadDir);
  }
  std::vector<std::string> writable = policy.write_paths;
  if (!policy.work_dir.empty()) writable.push_back(policy.work_dir);
  for (const auto& path : writable) {
    if (status.ok()) status = add(path, fs);
  }
  if (!status.ok()) {
    close(ruleset);
    return status;
  }
  return ruleset;
}

// The seccomp program: socket() of every family (but AF_UNIX with
// allow_unix_sockets) and io_uring always refused (socketpair, which reaches
// nothing outside, stays allowed); with !allow_processes also new processes
// and exec. Threads
// (clone with CLONE_THREAD) stay allowed; clone3 answers ENOSYS so that the
// C library falls back to clone, whose flags a filter can read.
std::vector<sock_filter> SeccompProgram(bool allow_processes, bool allow_unix_sockets) {
  std::vector<sock_filter> p;
  auto load = [&](uint32_t offset) { p.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offset)); };
  auto ret = [&](uint32_t value) { p.push_back(BPF_STMT(BPF_RET | BPF_K, value)); };
  auto errno_of = [](int e) { return SECCOMP_RET_ERRNO | (static_cast<uint32_t>(e) & 0xffff); };
  // Skip the next `skip` instructions unless the syscall number is `nr`.
  auto if_nr = [&](long nr, uint8_t skip) {
    p.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(nr), 0, skip));
  };
  const uint32_t kArg0 = offsetof(seccomp_data, args[0]);  // low half on little-endian
  const uint32_t kNr = offsetof(seccomp_data, nr);

  load(offsetof(seccomp_data, arch));
  p.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kAuditArch, 1, 0));
  ret(SECCOMP_RET_KILL_PROCESS);  // another ABI's syscall numbers: refuse outright
  load(kNr);
#ifdef __x86_64__
  p.push_back(BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1));  // x32 numbers
  ret(errno_of(ENOSYS));
#endif
  // AF_UNIX too where host code of a job runs: Landlock does not cover
  // connect() to a socket's path, so it could reach any listening socket on
  // the host its user may open (D-Bus, a local database, a container
  // daemon's).
  if (allow_unix_sockets) {
    if_nr(__NR_socket, 4);
    load(kArg0);
    p.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 0, 1));
    ret(SECCOMP_RET_ALLOW);
    ret(errno_of(EACCES));
  } else {
    if_nr(__NR_socket, 1);
    ret(errno_of(EACCES));
  }
  if_nr(__NR_io_uring_setup, 1);
  ret(errno_of(EPERM));
  if (!allow_processes) {
    if_nr(__NR_clone, 4);
    load(kArg0);
    p.push_back(BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 0, 1));
    ret(SECCOMP_RET_ALLOW);
    ret(errno_of(EPERM));
    if_nr(__NR_clone3, 1);
    ret(errno_of(ENOSYS));
#ifdef __x86_64__
    for (long nr : {__NR_fork, __NR_vfork}) {
      if_nr(nr, 1);
      ret(errno_of(EPERM));
    }
#endif
    for (long nr : {__NR_execve, __NR_execveat}) {
      if_nr(nr, 1);
      ret(errno_of(EPERM));
    }
  }
  ret(SECCOMP_RET_ALLOW);
  return p;
}

Status SetLimit(int resource, uint64_t value, const char* name) {
  if (value == 0) return Status::Ok();
  rlimit limit{value, value};
  if (setrlimit(resource, &limit) != 0) return Errno(std::string("setrlimit ") + name);
  return Status::Ok();
}

}  // namespace

std::string Applied::Describe() const {
  std::string text = landlock_abi > 0 ? "files: landlock ABI " + std::to_string(landlock_abi)
                                      : "files: NOT confined (no landlock)";
  text += network_namespace ? "; network: own namespace + seccomp" : "; network: seccomp";
  text += dropped_root ? "; user: nobody" : "; user: unchanged";
  return text;
}

std::vector<std::string> SystemReadPaths() {
  // /proc/self is the caller's own entry (the sanitizers read their options
  // and threads there), resolved when the rules are made: a program the
  // confined one starts does not get its own.
  return {"/proc/self",
          "/usr",
          "/lib",
          "/lib32",
          "/lib64",
          "/libx32",
          "/bin",
          "/sbin",
          "/etc/ld.so.cache",
          "/etc/ld.so.conf",
          "/etc/ld.so.conf.d",
          "/etc/alternatives",
          "/dev/zero",
          "/dev/urandom",
          "/dev/random"};
}

Result<Applied> Enter(const Policy& policy) {
  Applied applied;
  // Everything that allocates comes before the address-space limit.
  std::vector<sock_filter> program =
      SeccompProgram(policy.allow_processes, policy.allow_unix_sockets);
  sock_fprog fprog{static_cast<unsigned short>(program.size()), program.data()};
  int abi = 0;
  TF_ASSIGN_OR_RETURN(int ruleset, MakeRuleset(policy, &abi));
  Fd ruleset_fd(ruleset);
  if (ruleset < 0 && policy.require_landlock) {
    return Status::FailedPrecondition(
        "sandbox: this kernel has no Landlock (Linux 5.13+ with landlock in the lsm= list), "
        "so files cannot be confined");
  }
  applied.landlock_abi = abi;

  const bool drop = policy.drop_root && geteuid() == 0;
  if (!policy.work_dir.empty()) {
    if (drop && chown(policy.work_dir.c_str(), kNobody, kNobody) != 0) {
      return Errno("chown " + policy.work_dir);
    }
    if (chdir(policy.work_dir.c_str()) != 0) return Errno("chdir " + policy.work_dir);
  }
  // Without privilege the seccomp filter alone keeps the network out.
  if (geteuid() == 0) applied.network_namespace = unshare(CLONE_NEWNET) == 0;

  TF_RETURN_IF_ERROR(SetLimit(RLIMIT_AS, policy.max_address_space_bytes, "RLIMIT_AS"));
  TF_RETURN_IF_ERROR(SetLimit(RLIMIT_DATA, policy.max_data_bytes, "RLIMIT_DATA"));
  TF_RETURN_IF_ERROR(SetLimit(RLIMIT_FSIZE, policy.max_file_bytes, "RLIMIT_FSIZE"));
  TF_RETURN_IF_ERROR(SetLimit(RLIMIT_CPU, policy.max_cpu_seconds, "RLIMIT_CPU"));
  TF_RETURN_IF_ERROR(SetLimit(RLIMIT_NOFILE, policy.max_open_files, "RLIMIT_NOFILE"));
  // No core files: a crashing kernel must not fill the disk or leave its
  // memory (inputs of other jobs included) behind.
  rlimit no_core{0, 0};
  if (setrlimit(RLIMIT_CORE, &no_core) != 0) return Errno("setrlimit RLIMIT_CORE");

  if (drop) {
    // A change of user clears the signal that ends this process with its parent.
    int parent_death_signal = 0;
    if (prctl(PR_GET_PDEATHSIG, &parent_death_signal) != 0) return Errno("PR_GET_PDEATHSIG");
    const std::vector<gid_t> groups(policy.keep_groups.begin(), policy.keep_groups.end());
    if (setgroups(groups.size(), groups.data()) != 0) return Errno("setgroups");
    if (setresgid(kNobody, kNobody, kNobody) != 0) return Errno("setresgid nobody");
    if (setresuid(kNobody, kNobody, kNobody) != 0) return Errno("setresuid nobody");
    if (prctl(PR_SET_PDEATHSIG, parent_death_signal) != 0) return Errno("PR_SET_PDEATHSIG");
    applied.dropped_root = true;
  }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return Errno("PR_SET_NO_NEW_PRIVS");
  if (ruleset >= 0 && syscall(__NR_landlock_restrict_self, ruleset, 0) != 0) {
    return Errno("landlock_restrict_self");
  }
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog) != 0) return Errno("seccomp filter");
  return applied;
}

}  // namespace tf::sandbox
