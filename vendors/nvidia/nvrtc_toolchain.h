// The CUDA toolchain: NVRTC compiles a batch of kernel template
// instantiations into one CUBIN for one architecture (sm_80, sm_90, sm_90a),
// with no GPU needed. NVRTC runs inside `tunefleet-nvrtc`, a child process,
// so that a crash or a hang costs one batch and a time limit applies.
//
// Kernels are __global__ function templates taking the buffers (device
// pointers in spec order, inputs const) then the scalars (int64_t, in
// kernelspec::ScalarNames order); the reference is a plain __global__ kernel with
// the same parameters. Candidates of a spec with tensor_maps take them last,
// each a 64-byte-aligned 128-byte struct by value (__grid_constant__), which
// the reference does not receive. Name expressions ("&transpose<32,8>") instantiate the
// candidates; their lowered (mangled) names are the artifact's symbols, and
// ptxas's report gives each one's registers, shared memory, stack and spills.
//
// Buffer types: f32 float, f64 double, f16 __half, bf16 __nv_bfloat16,
// i8 int8_t, i32 int32_t, i64 int64_t, u8 uint8_t, u32 uint32_t.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "compiler/toolchain.h"

namespace tf::nvidia {

namespace v1 = ::tunefleet::v1;

class NvrtcToolchain : public compiler::Toolchain {
 public:
  // Checks `arch` ("sm_90"; empty: checks and version only, no compiling)
  // and that tunefleet-nvrtc runs. Without
  // `nvrtc_path`, the binary is looked for next to the running executable,
  // then where this build put it.
  static Result<std::unique_ptr<NvrtcToolchain>> Detect(const std::string& arch,
                                                        const std::string& nvrtc_path = "");

  std::string name() const override { return "cuda-nvrtc"; }
  std::string version() const override { return version_; }  // "NVRTC 13.0"
  std::string target() const override { return arch_; }
  std::string source_suffix() const override { return ".cu"; }
  std::string artifact_suffix() const override { return ".cubin"; }

  // Compile options must be on an allowlist (-D/-U with plain values,
  // --use_fast_math, -maxrregcount=N, -lineinfo, --extra-device-vectorization,
  // --ftz/--prec-div/--prec-sqrt/--fmad=true|false, -std=c++17|20, --restrict,
  // -I<relative dir>): options that write files or reach other tools are refused.
  Status Validate(const v1::KernelSpec& spec) const override;
  Result<std::string> GenerateBatch(const v1::KernelSpec& spec,
                                    const std::vector<v1::SourceFile>& sources,
                                    const std::vector<v1::Config>& configs) const override;
  // Threads per block, registers per block and shared memory against the
  // device's limits, and spills when the job forbids them (resource_check.h).
  Status CheckResources(const v1::KernelSpec& spec, const v1::Config& config,
                        const v1::Problem& problem, const v1::ResourceUsage& resources,
                        const std::map<std::string, int64_t>& device) const override;
  // `out_path` receives the CUBIN.
  Result<compiler::CompileOutcome> Compile(const std::string& work_dir, const std::string& tu_path,
                                           const std::string& out_path, const v1::KernelSpec& spec,
                                           const std::vector<v1::Config>& configs,
                                           double timeout_s) const override;

 private:
  Status CheckArch() const;

  NvrtcToolchain(std::string nvrtc_path, std::string arch, std::string version)
      : nvrtc_path_(std::move(nvrtc_path)), arch_(std::move(arch)), version_(std::move(version)) {}

  std::string nvrtc_path_;
  std::string arch_;
  std::string version_;
};

// The architecture a job compiles for on a device of `device_arch`: the
// spec's target.arch when set, else the device's own with its
// architecture-specific features (sm_90 -> sm_90a), as a job's candidates run
// only on the device class it is bound to. Empty when both are.
std::string CompileArch(const std::string& target_arch, const std::string& device_arch);

// Code built for sm_NNa (architecture-specific features) runs on sm_NN
// devices only; plain sm_NN code runs on sm_NN devices.
bool CodeRunsOn(const std::string& code_arch, const std::string& device_arch);

// The toolchain of kCompileSide (nvidia_vendor.h), for "cuda": NVRTC for
// CompileArch(spec.target().arch(), device_arch).
Result<std::unique_ptr<compiler::Toolchain>> MakeNvrtcToolchain(const v1::KernelSpec& spec,
                                                                const std::string& device_arch);

}  // namespace tf::nvidia
