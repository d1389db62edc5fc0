// The host C++ toolchain: g++ builds a batch into a shared object that the CPU
// runner dlopens. Kernels are plain C++ function templates.
//
// Buffer types: f32 float, f64 double, f16 _Float16, bf16 uint16_t (raw
// bits: g++ 12 has no bf16 arithmetic type), i8 int8_t, i32 int32_t,
// i64 int64_t, u8 uint8_t, u32 uint32_t. Scalars are int64_t.
//
// Artifact ABI, relied on by the CPU runner: for every configuration in the
// batch the shared object exports
//   extern "C" void <kernelspec::CandidateSymbol(config)>(void* const* buffers,
//                                                   const int64_t* scalars);
// which calls the instantiated entry with the buffers in spec order (inputs as
// const pointers) followed by the scalars in kernelspec::ScalarNames(spec) order.
// When the spec names a reference, kernelspec::kReferenceSymbol is exported with the
// same signature and calls it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "compiler/toolchain.h"

namespace tf::cpu {

namespace v1 = ::tunefleet::v1;

class HostToolchain : public compiler::Toolchain {
 public:
  // Runs `compiler --version` to check that it works and to learn its version.
  static Result<std::unique_ptr<HostToolchain>> Detect(const std::string& compiler = "g++");

  std::string name() const override { return "host-g++"; }
  std::string version() const override { return version_; }
  std::string target() const override { return "host"; }

  // Compile options must be on an allowlist (optimisation, ISA, -D/-U with
  // plain values, -std, warnings, -I of a relative directory): anything that
  // could load plugins, pass arguments to the linker or write files is refused.
  Status Validate(const v1::KernelSpec& spec) const override;
  Result<std::string> GenerateBatch(const v1::KernelSpec& spec,
                                    const std::vector<v1::SourceFile>& sources,
                                    const std::vector<v1::Config>& configs) const override;
  Result<compiler::CompileOutcome> Compile(const std::string& work_dir, const std::string& tu_path,
                                           const std::string& out_path, const v1::KernelSpec& spec,
                                           const std::vector<v1::Config>& configs,
                                           double timeout_s) const override;

 private:
  HostToolchain(std::string compiler, std::string version)
      : compiler_(std::move(compiler)), version_(std::move(version)) {}

  std::string compiler_;
  std::string version_;
};

// The toolchain of kCompileSide (cpu_vendor.h), for "cpp".
Result<std::unique_ptr<compiler::Toolchain>> MakeHostToolchain(const v1::KernelSpec& spec,
                                                               const std::string& device_arch);

}  // namespace tf::cpu
