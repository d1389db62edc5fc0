// Confines the calling process, and every program it later runs, for good.
// Two users: tunefleet-runner, which confines itself before it loads any
// candidate, and tunefleet-sandbox, the wrapper the coordinator runs each
// compiler under (see sandbox_main.cc).
//
// The layers, each from the kernel's own mechanisms:
//   files     Landlock: only `read_paths` can be read or executed and only
//             `write_paths` written; anything else fails with EACCES.
//   network   a new, empty network namespace when privileged, and always a
//             seccomp filter that refuses socket() for every family, AF_UNIX
//             too unless allow_unix_sockets (a path-named socket outside is
//             reachable otherwise: Landlock does not cover connect), and
//             io_uring, which could open sockets around it; socketpair stays.
//   processes with allow_processes false, the same filter refuses fork,
//             vfork, clone of a process (threads still work), execve.
//   resources setrlimit: address space or data size, file size, CPU time,
//             open files.
//   identity  run as root, the process becomes nobody (65534) after taking
//             ownership of `work_dir` for it, in `keep_groups` only.
// Linux only. Enter must run while the process has a single thread (setuid
// and unshare act on the calling thread only).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace tf::sandbox {

struct Policy {
  // Paths (recursively for folders) that may be read and executed; those
  // that do not exist are skipped, so one list serves several distributions.
  std::vector<std::string> read_paths;
  // Paths that may also be written, created in and removed from.
  std::vector<std::string> write_paths;
  // When set: made the current directory, writable, and owned by nobody when
  // the identity is dropped.
  std::string work_dir;
  bool allow_processes = true;
  // For GPU runners: their drivers open AF_UNIX sockets (one driver's
  // initialisation fails without them: docs/security.md), and what they run
  // of a job's is device code, which makes no system calls. Never for
  // processes that run a job's host code (CPU runners) or compile it.
  bool allow_unix_sockets = false;
  // 0: the limit is left as it is.
  uint64_t max_address_space_bytes = 0;
  // Private writable memory (heap, anonymous mappings): unlike the address
  // space, it leaves out what a GPU driver only reserves.
  uint64_t max_data_bytes = 0;
  uint64_t max_file_bytes = 0;
  uint64_t max_cpu_seconds = 0;
  uint64_t max_open_files = 0;
  // Running as root: become nobody. Ignored otherwise.
  bool drop_root = true;
  // Becoming nobody: the supplementary groups it keeps (otherwise none), for
  // device nodes only their group may open (mode 0660, group render or
  // video).
  std::vector<uint32_t> keep_groups;
  // Fail when the kernel lacks Landlock rather than run without the file
  // layer (the network and process layers need only seccomp, which every
  // supported kernel has).
  bool require_landlock = true;
};

// What Enter put in place; the rest was not available.
struct Applied {
  int landlock_abi = 0;  // 0: no file confinement
  bool network_namespace = false;
  bool dropped_root = false;
  std::string Describe() const;
};

// Errors say which layer could not be set up and why.
Result<Applied> Enter(const Policy& policy);

// Folders a dynamically linked program and the host compiler need to read:
// /usr, /lib*, /bin, /etc/ld.so.cache and the like, and the caller's own
// /proc entry.
std::vector<std::string> SystemReadPaths();

}  // namespace tf::sandbox
