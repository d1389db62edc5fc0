// A toolchain turns a batch of configurations of one kernel into one artifact.
// Each toolchain (host C++, CUDA, HIP) lives in its own file behind this
// interface; the batch builder and the coordinator only see this one.
//
// Artifact ABI, relied on by the worker's runner: for every configuration in
// the batch the artifact exports
//   extern "C" void <spec::CandidateSymbol(config)>(void* const* buffers,
//                                                   const int64_t* scalars);
// which calls the instantiated entry with the buffers in spec order (inputs as
// const pointers) followed by the scalars in spec::ScalarNames(spec) order.
// When the spec names a reference, spec::kReferenceSymbol is exported with the
// same signature and calls it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "tunefleet/v1/common.pb.h"
#include "tunefleet/v1/spec.pb.h"

namespace tf::compiler {

namespace v1 = ::tunefleet::v1;

// What one compiler run did. A failed compile is an outcome, not an error.
struct CompileOutcome {
  bool ok = false;
  bool timed_out = false;
  std::string diagnostics;  // the compiler's output
  double cpu_seconds = 0;
  double wall_seconds = 0;
};

class Toolchain {
 public:
  virtual ~Toolchain() = default;

  virtual std::string name() const = 0;  // "host-g++"
  // The compiler's own version line; part of kernel fingerprints, so that a
  // compiler upgrade invalidates cached results.
  virtual std::string version() const = 0;
  virtual std::string target() const = 0;  // "host"

  // Checks what this toolchain needs of a spec (compile options, buffer
  // types); errors name the offending field and value.
  virtual Status Validate(const v1::KernelSpec& spec) const = 0;
  // The translation unit of one batch. Pure: no files, no processes.
  virtual Result<std::string> GenerateBatch(const v1::KernelSpec& spec,
                                            const std::vector<v1::Config>& configs) const = 0;
  // Compiles `tu_path` into `out_path`, both relative to `work_dir`, which
  // holds the job's sources. Runs the compiler in its own process group,
  // killed after `timeout_s`. Fails only when the compiler cannot be started.
  virtual Result<CompileOutcome> Compile(const std::string& work_dir, const std::string& tu_path,
                                         const std::string& out_path, const v1::KernelSpec& spec,
                                         double timeout_s) const = 0;
};

// The toolchain for spec.language(): "cpp" is the host compiler; languages
// whose toolchain this build lacks are refused by name.
Result<std::unique_ptr<Toolchain>> MakeToolchain(const v1::KernelSpec& spec);

}  // namespace tf::compiler
