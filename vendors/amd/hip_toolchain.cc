#include "vendors/amd/hip_toolchain.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <set>
#include <sstream>

#include "common/files.h"
#include "compiler/compile_flags.h"
#include "compiler/compile_sandbox.h"
#include "compiler/element_type.h"
#include "compiler/grid_launch.h"
#include "compiler/source_copies.h"
#include "compiler/source_tree.h"
#include "compiler/tool_version.h"
#include "compiler/toolchain_checks.h"
#include "kernelspec/config.h"
#include "vendors/amd/amd_vendor.h"
#include "vendors/amd/code_object.h"
#include "vendors/amd/resource_check.h"

namespace tf::amd {
namespace {

bool IsAllowedFlag(const std::string& flag) {
  static const std::regex kAllowed(
      std::string("-O[0-3]|-ffast-math|-ffp-contract=(fast|on|off)|-munsafe-fp-atomics"
                  "|-m(no-)?cumode|-std=c\\+\\+(17|20)|") +
      compiler::kDefineFlagsPattern);
  return std::regex_match(flag, kAllowed);
}

Result<std::vector<std::string>> UserFlags(const v1::KernelSpec& spec) {
  static const std::string kAllowedSummary =
      std::string(compiler::kDefineFlagsSummary) +
      ", -O0..-O3, -ffast-math, -ffp-contract=fast|on|off, -munsafe-fp-atomics, -mcumode, "
      "-mno-cumode, -std=c++17|20, -I<relative dir>";
  return compiler::AllowedCompileFlags(spec, IsAllowedFlag, "hip-clang", kAllowedSummary);
}

// The header each buffer element type needs, "" for built-in types.
constexpr compiler::DtypeText kElementTypeHeaders[] = {{"f32", ""},
                                                       {"f64", ""},
                                                       {"f16", "hip/hip_fp16.h"},
                                                       {"bf16", "hip/hip_bfloat16.h"},
                                                       {"i8", ""},
                                                       {"i32", ""},
                                                       {"i64", ""},
                                                       {"u8", ""},
                                                       {"u32", ""}};

std::string CandidateMarker(size_t i) { return "tf_candidate_" + std::to_string(i); }
const char kReferenceMarker[] = "tf_reference";

std::string MarkerDefinition(const std::string& marker, const std::string& function) {
  return "static __attribute__((used)) __device__ const void* const " + marker +
         " = reinterpret_cast<const void*>(&" + function + ");\n";
}

// The first of `names` on PATH, as an absolute path; empty when none is.
std::string FindOnPath(std::initializer_list<const char*> names) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin");
  std::vector<std::string> folders;
  for (std::string dir; std::getline(dirs, dir, ':');) folders.push_back(dir);
  for (const char* name : names) {
    for (const std::string& dir : folders) {
      const std::string candidate = dir + "/" + name;
      if (access(candidate.c_str(), X_OK) == 0) return candidate;
    }
  }
  return "";
}

Result<HipTools> FindTools() {
  HipTools tools;
  tools.clang = FindOnPath({"clang++-19"});
  tools.lld = FindOnPath({"ld.lld-19"});
  tools.llvm_as = FindOnPath({"llvm-as-19"});
  tools.readelf = FindOnPath({"llvm-readelf-19"});
  for (const char* dir : {"/usr/lib/x86_64-linux-gnu/amdgcn/bitcode", "/opt/rocm/amdgcn/bitcode"}) {
    if (std::filesystem::exists(std::string(dir) + "/hip.bc")) {
      tools.bitcode = dir;
      break;
    }
  }
  const std::pair<const char*, const std::string*> kNeeded[] = {
      {"clang++-19", &tools.clang},
      {"ld.lld-19", &tools.lld},
      {"llvm-as-19", &tools.llvm_as},
      {"llvm-readelf-19", &tools.readelf},
      {"the ROCm device libraries (hip.bc)", &tools.bitcode}};
  for (const auto& [what, where] : kNeeded) {
    if (where->empty()) {
      return Status::Unavailable(
          std::string("hip toolchain: ") + what +
          " not found; install Debian's clang-19 lld-19 llvm-19 rocm-device-libs libamdhip64-dev "
          "(scripts/install-deps.sh)");
    }
  }
  return tools;
}

// The ROCm device libraries as clang links them for `gfx`, with the
// ISA-version library that Debian's ROCm 5.2 lacks for gfx942 and gfx1100
// assembled per compile at `isa_bitcode`.
std::vector<std::string> DeviceLibraryFlags(const HipTools& tools, const GfxTarget& gfx,
                                            bool fast_math, const std::string& isa_bitcode) {
  const std::string on_off = fast_math ? "on" : "off";
  std::vector<std::string> libraries = {
      "hip",
      "opencl",  // ROCm 5.2's __syncthreads calls __atomic_work_item_fence
      "ockl",
      "ocml",
      std::string("oclc_wavefrontsize64_") + (gfx.wave_size == 64 ? "on" : "off"),
      "oclc_abi_version_500",
      "oclc_daz_opt_off",
      "oclc_unsafe_math_" + on_off,
      "oclc_finite_only_" + on_off,
      "oclc_correctly_rounded_sqrt_on"};
  std::vector<std::string> flags = {"-nogpulib"};
  for (const std::string& library : libraries) {
    flags.insert(flags.end(), {"-Xclang", "-mlink-builtin-bitcode", "-Xclang",
                               tools.bitcode + "/" + library + ".bc"});
  }
  flags.insert(flags.end(), {"-Xclang", "-mlink-builtin-bitcode", "-Xclang", isa_bitcode});
  return flags;
}

std::string IsaVersionModule(const GfxTarget& gfx) {
  return "target datalayout = "
         "\"e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:"
         "128:128-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-"
         "v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9\"\n"
         "target triple = \"amdgcn-amd-amdhsa\"\n"
         "@__oclc_ISA_version = linkonce_odr protected local_unnamed_addr addrspace(4) constant "
         "i32 " +
         std::to_string(gfx.isa_version) + ", align 4\n";
}

Result<std::string> KernelOf(const CodeObjectReport& report, const std::string& marker,
                             const std::string& function) {
  auto found = report.markers.find(LocalVariableSymbol(marker));
  if (found == report.markers.end()) {
    return Status::Internal("the code object does not say which kernel " + function +
                            " became (no relocation of " + marker + ")");
  }
  return found->second;
}

}  // namespace

Result<std::unique_ptr<HipToolchain>> HipToolchain::Detect(const std::string& arch,
                                                           const HipTools* tools, ToolRuns runs) {
  const GfxTarget* gfx = nullptr;
  if (!arch.empty()) {
    gfx = FindGfxTarget(arch);
    if (gfx == nullptr) {
      return Status::InvalidArgument("target.arch: '" + arch +
                                     "' is not an AMD target TuneFleet builds for (" +
                                     GfxTargetNames() + ")");
    }
  }
  HipTools found;
  if (tools != nullptr) {
    found = *tools;
  } else {
    TF_ASSIGN_OR_RETURN(found, FindTools());
  }
  auto version = compiler::ToolVersion(found.clang);
  if (!version.ok()) {
    return Status::Unavailable("hip toolchain: '" + found.clang +
                               " --version' failed: " + version.status().message());
  }
  return std::unique_ptr<HipToolchain>(
      new HipToolchain(std::move(found), gfx ? gfx->name : "", gfx, *version, runs));
}

Status HipToolchain::Validate(const v1::KernelSpec& spec) const {
  TF_RETURN_IF_ERROR(compiler::CheckMainSource(spec));
  TF_RETURN_IF_ERROR(compiler::CheckGridLaunch(spec));
  if (spec.tensor_maps_size() > 0) {
    return Status::InvalidArgument("tensor_maps: hip kernels take no tensor maps");
  }
  for (const v1::Buffer& buffer : spec.buffers()) {
    TF_RETURN_IF_ERROR(compiler::TextForDtype(buffer, kElementTypeHeaders).status());
  }
  return UserFlags(spec).status();
}

Status HipToolchain::CheckArch() const {
  if (gfx_ != nullptr) return Status::Ok();
  return Status::FailedPrecondition(
      "target.arch: no gfx target to compile for; set target.arch in the spec (e.g. gfx942), "
      "pass --target, or let a job bind to a device");
}

Result<std::string> HipToolchain::GenerateBatch(const v1::KernelSpec& spec,
                                                const std::vector<v1::SourceFile>& sources,
                                                const std::vector<v1::Config>& configs) const {
  TF_RETURN_IF_ERROR(CheckArch());
  std::set<std::string> headers;
  for (const v1::Buffer& buffer : spec.buffers()) {
    TF_ASSIGN_OR_RETURN(std::string header, compiler::TextForDtype(buffer, kElementTypeHeaders));
    if (!header.empty()) headers.insert(header);
  }
  std::string tu = "// Generated by TuneFleet " + name() + " for " + arch_ + ": " +
                   std::to_string(configs.size()) + " candidates of kernel " + spec.name() +
                   ". Each tf_candidate_<i> holds one instantiation's address, so that the\n"
                   "// code object's relocations name the kernels as the compiler mangled them.\n"
                   "#include <hip/hip_runtime.h>\n#include <cstdint>\n";
  for (const std::string& header : headers) tu += "#include <" + header + ">\n";
  TF_ASSIGN_OR_RETURN(std::string source_text, compiler::BatchSourceText(spec, sources, configs));
  tu += source_text + "\n";
  TF_ASSIGN_OR_RETURN(std::vector<std::string> functions,
                      compiler::BatchKernelFunctions(spec, configs));
  for (size_t i = 0; i < configs.size(); ++i) {
    tu += "// " + kernelspec::ConfigKey(configs[i]) + "\n" +
          MarkerDefinition(CandidateMarker(i), functions[i]);
  }
  if (const std::string reference = compiler::BatchReferenceFunction(spec); !reference.empty()) {
    tu += "// reference\n" + MarkerDefinition(kReferenceMarker, reference);
  }
  return tu;
}

Result<ProcessResult> HipToolchain::RunTool(const std::vector<std::string>& argv,
                                            const std::string& work_dir, double timeout_s,
                                            compiler::CompileOutcome& outcome) const {
  RunOptions options;
  options.timeout_s = timeout_s;
  options.cwd = work_dir;
  std::vector<std::string> command = argv;
  if (runs_ == ToolRuns::kSandboxed) {
    TF_ASSIGN_OR_RETURN(command, compiler::SandboxedCommand(argv, work_dir, {tools_.bitcode},
                                                            compiler::CompileLimits(), &options));
  }
  TF_ASSIGN_OR_RETURN(ProcessResult run, RunProcess(command, options));
  outcome.cpu_seconds += run.cpu_seconds;
  outcome.wall_seconds += run.wall_seconds;
  outcome.timed_out = outcome.timed_out || run.timed_out;
  return run;
}

Result<compiler::CompileOutcome> HipToolchain::Compile(
    const std::string& work_dir, const std::string& tu_path, const std::string& out_path,
    const v1::KernelSpec& spec, const std::vector<v1::Config>& configs, double timeout_s) const {
  TF_RETURN_IF_ERROR(CheckArch());
  TF_ASSIGN_OR_RETURN(std::vector<std::string> flags, UserFlags(spec));
  compiler::CompileOutcome outcome;
  const std::string isa_source = out_path + ".isa.ll", isa_bitcode = out_path + ".isa.bc";
  TF_RETURN_IF_ERROR(WriteFileAtomic(work_dir + "/" + isa_source, IsaVersionModule(*gfx_)));
  TF_ASSIGN_OR_RETURN(
      ProcessResult assembled,
      RunTool({tools_.llvm_as, isa_source, "-o", isa_bitcode}, work_dir, timeout_s, outcome));
  std::filesystem::remove(work_dir + "/" + isa_source);
  if (!assembled.success()) {
    outcome.diagnostics = "llvm-as (the ISA-version library): " + assembled.output;
    return outcome;
  }

  const bool fast_math = std::find(flags.begin(), flags.end(), "-ffast-math") != flags.end();
  std::vector<std::string> argv = {tools_.clang,
                                   "-x",
                                   "hip",
                                   "--offload-arch=" + arch_,
                                   "--cuda-device-only",
                                   "--no-gpu-bundle-output",
                                   "--ld-path=" + tools_.lld,
                                   "-std=c++20",
                                   "-O3"};
  for (const std::string& flag : DeviceLibraryFlags(tools_, *gfx_, fast_math, isa_bitcode)) {
    argv.push_back(flag);
  }
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {"-o", out_path, tu_path});
  TF_ASSIGN_OR_RETURN(ProcessResult compiled, RunTool(argv, work_dir, timeout_s, outcome));
  std::filesystem::remove(work_dir + "/" + isa_bitcode);
  outcome.diagnostics = std::move(compiled.output);
  if (!compiled.success()) return outcome;

  TF_ASSIGN_OR_RETURN(ProcessResult read, RunTool({tools_.readelf, "--notes", "--relocs",
                                                   "--symbols", "--wide", out_path},
                                                  work_dir, timeout_s, outcome));
  if (!read.success()) {
    return Status::Internal("llvm-readelf could not read the code object: " + read.output);
  }
  TF_ASSIGN_OR_RETURN(CodeObjectReport report, ParseReadelfReport(read.output));
  TF_ASSIGN_OR_RETURN(std::vector<std::string> functions,
                      compiler::BatchKernelFunctions(spec, configs));
  for (size_t i = 0; i < configs.size(); ++i) {
    TF_ASSIGN_OR_RETURN(std::string symbol, KernelOf(report, CandidateMarker(i), functions[i]));
    outcome.kernels.push_back({symbol, report.kernels[symbol]});
  }
  if (const std::string reference = compiler::BatchReferenceFunction(spec); !reference.empty()) {
    TF_ASSIGN_OR_RETURN(outcome.reference_symbol, KernelOf(report, kReferenceMarker, reference));
  }
  outcome.ok = true;
  return outcome;
}

Status HipToolchain::CheckResources(const v1::KernelSpec& spec, const v1::Config& config,
                                    const v1::Problem& problem, const v1::ResourceUsage& resources,
                                    const std::map<std::string, int64_t>& device) const {
  if (gfx_ == nullptr) return Status::Ok();
  return amd::CheckResources(*gfx_, spec, config, problem, resources, device);
}

std::string CompileArch(const std::string& target_arch, const std::string& device_arch) {
  if (!target_arch.empty()) return target_arch;
  return device_arch.substr(0, device_arch.find(':'));
}

bool CodeRunsOn(const std::string& code_arch, const std::string& device_arch) {
  return code_arch.substr(0, code_arch.find(':')) == device_arch.substr(0, device_arch.find(':'));
}

Result<std::unique_ptr<compiler::Toolchain>> MakeHipToolchain(const v1::KernelSpec& spec,
                                                              const std::string& device_arch) {
  TF_ASSIGN_OR_RETURN(std::unique_ptr<HipToolchain> hip,
                      HipToolchain::Detect(CompileArch(spec.target().arch(), device_arch)));
  return std::unique_ptr<compiler::Toolchain>(std::move(hip));
}

const vendors::CompileSide kCompileSide = {MakeHipToolchain, CodeRunsOn};

}  // namespace tf::amd
