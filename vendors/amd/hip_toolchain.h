// The HIP toolchain: Debian's clang-19 compiles a batch of kernel template
// instantiations into one AMDGPU code object for one gfx target (gfx90a,
// gfx940, gfx942, gfx1030, gfx1100), with no GPU needed. clang runs as a
// plain compiler process, sandboxed and time-limited like the host's g++
// (docs/vendors.md says why clang rather than hipRTC: hipRTC from ROCm 5.2
// knows neither gfx942 nor gfx1100 and aborts its process for gfx940).
//
// Kernels are __global__ function templates taking the buffers (device
// pointers in spec order, inputs const) then the scalars (int64_t, in
// kernelspec::ScalarNames order), or with param_style: define plain kernels
// in a copy of the source per configuration (compiler/source_copies.h); the
// reference is a plain __global__ kernel with the same parameters. The
// batch's translation unit gives each
// candidate a file-local device variable holding its kernel's address
// (tf_candidate_<i>, the reference tf_reference), which instantiates it; the
// code object's relocation of that variable names the mangled kernel, and
// its metadata note gives the kernel's VGPRs, SGPRs, AGPRs, LDS, scratch,
// spills and wavefront size (code_object.h).
//
// Buffer types: f32 float, f64 double, f16 __half, bf16 hip_bfloat16,
// i8 int8_t, i32 int32_t, i64 int64_t, u8 uint8_t, u32 uint32_t.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/subprocess.h"
#include "compiler/toolchain.h"
#include "vendors/amd/gfx_targets.h"

namespace tf::amd {

namespace v1 = ::tunefleet::v1;

// Where the toolchain's programs and the ROCm device libraries are.
struct HipTools {
  std::string clang;    // clang++-19
  std::string lld;      // ld.lld-19: clang's default linker knows no elf64_amdgpu
  std::string llvm_as;  // llvm-as-19: assembles the ISA-version library
  std::string readelf;  // llvm-readelf-19
  std::string bitcode;  // the folder of hip.bc, ocml.bc, ockl.bc, oclc_*.bc
};

class HipToolchain : public compiler::Toolchain {
 public:
  // How the tools run: a job's sources always under tunefleet-sandbox
  // (compile_sandbox.h); TuneFleet's own kernels at build time
  // (compare_kernels_main.cc) as plain processes, since a build (in a
  // container, say) may not be able to set up the sandbox.
  enum class ToolRuns { kSandboxed, kPlain };

  // Checks `arch` (empty: checks and version only, no compiling) and finds
  // the tools on PATH and the device libraries in Debian's or ROCm's folder,
  // unless `tools` names them.
  static Result<std::unique_ptr<HipToolchain>> Detect(const std::string& arch,
                                                      const HipTools* tools = nullptr,
                                                      ToolRuns runs = ToolRuns::kSandboxed);

  std::string name() const override { return "hip-clang"; }
  std::string version() const override { return version_; }  // "Debian clang version 19.1.7 ..."
  std::string target() const override { return arch_; }

  // Compile options must be on an allowlist (-D/-U with plain values,
  // -O0..-O3, -ffast-math, -ffp-contract=fast|on|off, -munsafe-fp-atomics,
  // -mcumode, -mno-cumode, -std=c++17|20, -I<relative dir>).
  Status Validate(const v1::KernelSpec& spec) const override;
  Result<std::string> GenerateBatch(const v1::KernelSpec& spec,
                                    const std::vector<v1::SourceFile>& sources,
                                    const std::vector<v1::Config>& configs) const override;
  // `out_path` receives the code object (what hipModuleLoadData takes).
  Result<compiler::CompileOutcome> Compile(const std::string& work_dir, const std::string& tu_path,
                                           const std::string& out_path, const v1::KernelSpec& spec,
                                           const std::vector<v1::Config>& configs,
                                           double timeout_s) const override;
  // LDS, registers for the launch's workgroup and spills (resource_check.h).
  Status CheckResources(const v1::KernelSpec& spec, const v1::Config& config,
                        const v1::Problem& problem, const v1::ResourceUsage& resources,
                        const std::map<std::string, int64_t>& device) const override;

 private:
  HipToolchain(HipTools tools, std::string arch, const GfxTarget* gfx, std::string version,
               ToolRuns runs)
      : tools_(std::move(tools)),
        arch_(std::move(arch)),
        gfx_(gfx),
        version_(std::move(version)),
        runs_(runs) {}

  Status CheckArch() const;
  // One tool run, sandboxed unless runs_ says plain; its times are added to
  // `outcome`.
  Result<ProcessResult> RunTool(const std::vector<std::string>& argv, const std::string& work_dir,
                                double timeout_s, compiler::CompileOutcome& outcome) const;

  HipTools tools_;
  std::string arch_;
  const GfxTarget* gfx_;  // null when arch_ is empty
  std::string version_;
  ToolRuns runs_;
};

// The target a job compiles for: the spec's target.arch when set, else the
// device's (its gcnArchName without target features). Empty when both are.
std::string CompileArch(const std::string& target_arch, const std::string& device_arch);

// A code object runs on devices of its gfx target only, whatever target
// features ("gfx90a:sramecc+:xnack-") either names.
bool CodeRunsOn(const std::string& code_arch, const std::string& device_arch);

// The toolchain of kCompileSide (amd_vendor.h), for "hip".
Result<std::unique_ptr<compiler::Toolchain>> MakeHipToolchain(const v1::KernelSpec& spec,
                                                              const std::string& device_arch);

}  // namespace tf::amd
