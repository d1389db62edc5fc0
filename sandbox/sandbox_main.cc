// tunefleet-sandbox: runs a program confined by sandbox::Enter. The
// coordinator runs every compiler under it, so that what a submitted spec
// makes the compiler read or run stays inside the job's folder.
//
//   tunefleet-sandbox [--read PATH]... [--write PATH]... [--work-dir DIR]
//       [--cpu-seconds N] [--memory-mb N] [--file-mb N] [--open-files N]
//       -- PROGRAM [ARG]...
//
// The system folders of SystemReadPaths are always readable. Exits 126 (and
// says why on stderr) when the sandbox cannot be set up, 127 when PROGRAM
// cannot be run; otherwise it becomes PROGRAM.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "sandbox/sandbox.h"

namespace {

[[noreturn]] void Fail(int code, const std::string& message) {
  std::fprintf(stderr, "tunefleet-sandbox: %s\n", message.c_str());
  std::exit(code);
}

uint64_t Number(const char* flag, const char* text) {
  char* end = nullptr;
  unsigned long long value = std::strtoull(text, &end, 10);
  if (end == text || *end != '\0')
    Fail(126, std::string(flag) + ": '" + text + "' is not a number");
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    std::printf(
        "tunefleet-sandbox: runs PROGRAM confined (Landlock, seccomp, rlimits; "
        "docs/security.md). TuneFleet runs every compiler under it.\n"
        "usage: tunefleet-sandbox [--read PATH]... [--write PATH]... [--work-dir DIR]\n"
        "         [--cpu-seconds N] [--memory-mb N] [--file-mb N] [--open-files N] -- PROGRAM "
        "[ARG]...\n"
        "The system folders are always readable. Exits 126 when the sandbox cannot be set "
        "up, 127 when PROGRAM cannot be run; otherwise it becomes PROGRAM.\n"
        "example: tunefleet-sandbox --read . --write /tmp -- g++ -c k.cc -o /tmp/k.o\n");
    return 0;
  }
  tf::sandbox::Policy policy;
  policy.read_paths = tf::sandbox::SystemReadPaths();
  policy.drop_root = false;  // the compiler writes where the coordinator reads
  int i = 1;
  for (; i < argc && std::strcmp(argv[i], "--") != 0; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) Fail(126, flag + " needs a value");
    const char* value = argv[++i];
    if (flag == "--read") {
      policy.read_paths.push_back(value);
    } else if (flag == "--write") {
      policy.write_paths.push_back(value);
    } else if (flag == "--work-dir") {
      policy.work_dir = value;
    } else if (flag == "--cpu-seconds") {
      policy.max_cpu_seconds = Number(argv[i - 1], value);
    } else if (flag == "--memory-mb") {
      policy.max_address_space_bytes = Number(argv[i - 1], value) << 20;
    } else if (flag == "--file-mb") {
      policy.max_file_bytes = Number(argv[i - 1], value) << 20;
    } else if (flag == "--open-files") {
      policy.max_open_files = Number(argv[i - 1], value);
    } else {
      Fail(126, "unknown flag " + flag);
    }
  }
  if (i + 1 >= argc) Fail(126, "no program given after --");
  char** program = argv + i + 1;
  auto entered = tf::sandbox::Enter(policy);
  if (!entered.ok()) Fail(126, entered.status().message());
  execvp(program[0], program);
  Fail(127, std::string("cannot run ") + program[0] + ": " + std::strerror(errno));
}
