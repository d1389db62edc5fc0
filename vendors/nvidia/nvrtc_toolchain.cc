#include "vendors/nvidia/nvrtc_toolchain.h"

#include <unistd.h>

#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "common/files.h"
#include "common/sanitizer.h"
#include "common/subprocess.h"
#include "compiler/compile_flags.h"
#include "compiler/compile_sandbox.h"
#include "compiler/element_type.h"
#include "compiler/grid_launch.h"
#include "compiler/source_copies.h"
#include "compiler/source_tree.h"
#include "compiler/tool_version.h"
#include "compiler/toolchain_checks.h"
#include "kernelspec/config.h"
#include "vendors/nvidia/nvidia_vendor.h"
#include "vendors/nvidia/ptxas_log.h"
#include "vendors/nvidia/resource_check.h"

namespace tf::nvidia {
namespace {

bool IsAllowedFlag(const std::string& flag) {
  static const std::regex kAllowed(
      std::string("--?(use_fast_math|lineinfo|generate-line-info|extra-device-vectorization"
                  "|restrict)"
                  "|--?maxrregcount=[0-9]+"
                  "|--(ftz|prec-div|prec-sqrt|fmad)=(true|false)"
                  "|--?std=c\\+\\+(17|20)|") +
      compiler::kDefineFlagsPattern);
  return std::regex_match(flag, kAllowed);
}

Result<std::vector<std::string>> UserFlags(const v1::KernelSpec& spec) {
  static const std::string kAllowedSummary =
      std::string(compiler::kDefineFlagsSummary) +
      ", --use_fast_math, -maxrregcount=N, -lineinfo, --extra-device-vectorization, "
      "--ftz/--prec-div/--prec-sqrt/--fmad=true|false, -std=c++17|20, --restrict, "
      "-I<relative dir>";
  return compiler::AllowedCompileFlags(spec, IsAllowedFlag, "cuda-nvrtc", kAllowedSummary);
}

// The header each buffer element type needs, "" for built-in types.
constexpr compiler::DtypeText kElementTypeHeaders[] = {{"f32", ""},
                                                       {"f64", ""},
                                                       {"f16", "cuda_fp16.h"},
                                                       {"bf16", "cuda_bf16.h"},
                                                       {"i8", ""},
                                                       {"i32", ""},
                                                       {"i64", ""},
                                                       {"u8", ""},
                                                       {"u32", ""}};

// The name expression that makes NVRTC instantiate `function` and report its
// lowered name.
std::string NameExpression(const std::string& function) { return "&" + function; }

bool IsExecutable(const std::string& path) { return access(path.c_str(), X_OK) == 0; }

std::vector<std::string> NvrtcCandidates() {
  std::vector<std::string> paths = {ExecutableDir() + "/tunefleet-nvrtc"};
#ifdef TF_NVRTC_BUILD_PATH
  paths.push_back(TF_NVRTC_BUILD_PATH);
#endif
  return paths;
}

// "EXPRESSION<TAB>LOWERED" lines, as tunefleet-nvrtc writes them.
Result<std::map<std::string, std::string>> ReadLoweredNames(const std::string& path) {
  TF_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  std::map<std::string, std::string> lowered;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    size_t tab = line.find('\t');
    if (tab == std::string::npos) {
      return Status::Internal(path + ": line '" + line + "' is not EXPRESSION<TAB>LOWERED_NAME");
    }
    lowered[line.substr(0, tab)] = line.substr(tab + 1);
  }
  return lowered;
}

Result<std::string> LoweredName(const std::map<std::string, std::string>& lowered,
                                const std::string& function) {
  auto found = lowered.find(NameExpression(function));
  if (found == lowered.end()) {
    return Status::Internal("tunefleet-nvrtc reported no lowered name for " + function);
  }
  return found->second;
}

}  // namespace

Result<std::unique_ptr<NvrtcToolchain>> NvrtcToolchain::Detect(const std::string& arch,
                                                               const std::string& nvrtc_path) {
  static const std::regex kArch("sm_[0-9]{2,3}[af]?");
  if (!arch.empty() && !std::regex_match(arch, kArch)) {
    return Status::InvalidArgument("target.arch: '" + arch +
                                   "' is not an NVIDIA architecture like sm_80, sm_90 or sm_90a");
  }
  std::vector<std::string> candidates =
      nvrtc_path.empty() ? NvrtcCandidates() : std::vector<std::string>{nvrtc_path};
  std::string found;
  for (const std::string& path : candidates) {
    if (IsExecutable(path)) {
      found = path;
      break;
    }
  }
  if (found.empty()) {
    std::string tried;
    for (const std::string& path : candidates) tried += (tried.empty() ? "" : ", ") + path;
    return Status::Unavailable("cuda toolchain: tunefleet-nvrtc not found (tried " + tried +
                               "); build TuneFleet where the CUDA toolkit with NVRTC is installed");
  }
  auto version = compiler::ToolVersion(found);
  if (!version.ok()) {
    return Status::Unavailable("cuda toolchain: '" + found +
                               " --version' failed: " + version.status().message());
  }
  return std::unique_ptr<NvrtcToolchain>(new NvrtcToolchain(found, arch, *version));
}

Status NvrtcToolchain::Validate(const v1::KernelSpec& spec) const {
  TF_RETURN_IF_ERROR(compiler::CheckMainSource(spec));
  TF_RETURN_IF_ERROR(compiler::CheckGridLaunch(spec));
  for (const v1::Buffer& buffer : spec.buffers()) {
    TF_RETURN_IF_ERROR(compiler::TextForDtype(buffer, kElementTypeHeaders).status());
  }
  return UserFlags(spec).status();
}

Status NvrtcToolchain::CheckArch() const {
  if (!arch_.empty()) return Status::Ok();
  return Status::FailedPrecondition(
      "target.arch: no architecture to compile for; set target.arch in the spec (e.g. sm_90a), "
      "pass --target, or let a job bind to a device");
}

Result<std::string> NvrtcToolchain::GenerateBatch(const v1::KernelSpec& spec,
                                                  const std::vector<v1::SourceFile>& sources,
                                                  const std::vector<v1::Config>& configs) const {
  TF_RETURN_IF_ERROR(CheckArch());
  std::string tu = "// Generated by TuneFleet " + name() + " for " + arch_ + ": " +
                   std::to_string(configs.size()) + " candidates of kernel " + spec.name() +
                   ", instantiated through NVRTC name expressions:\n";
  TF_ASSIGN_OR_RETURN(std::vector<std::string> functions,
                      compiler::BatchKernelFunctions(spec, configs));
  for (const std::string& function : functions) tu += "//   " + NameExpression(function) + "\n";
  std::set<std::string> headers;
  for (const v1::Buffer& buffer : spec.buffers()) {
    TF_ASSIGN_OR_RETURN(std::string header, compiler::TextForDtype(buffer, kElementTypeHeaders));
    if (!header.empty()) headers.insert(header);
  }
  tu += "#include <cstdint>\n";  // the fixed-width types of the kernel's parameters
  for (const std::string& header : headers) tu += "#include <" + header + ">\n";
  TF_ASSIGN_OR_RETURN(std::string source_text, compiler::BatchSourceText(spec, sources, configs));
  return tu + source_text;
}

Result<compiler::CompileOutcome> NvrtcToolchain::Compile(
    const std::string& work_dir, const std::string& tu_path, const std::string& out_path,
    const v1::KernelSpec& spec, const std::vector<v1::Config>& configs, double timeout_s) const {
  TF_RETURN_IF_ERROR(CheckArch());
  TF_ASSIGN_OR_RETURN(std::vector<std::string> flags, UserFlags(spec));
  TF_ASSIGN_OR_RETURN(std::vector<std::string> functions,
                      compiler::BatchKernelFunctions(spec, configs));
  const std::string reference = compiler::BatchReferenceFunction(spec);
  const std::string names_path = out_path + ".names";
  std::vector<std::string> argv = {nvrtc_path_, "--arch", arch_,     "--tu",    tu_path,
                                   "--cubin",   out_path, "--names", names_path};
  for (const std::string& function : functions) {
    argv.insert(argv.end(), {"--name", NameExpression(function)});
  }
  if (!reference.empty()) argv.insert(argv.end(), {"--name", NameExpression(reference)});
  argv.push_back("--");
  argv.insert(argv.end(), flags.begin(), flags.end());

  RunOptions options;
  options.timeout_s = timeout_s;
  compiler::CompileLimits limits;
  // tunefleet-nvrtc is built with the rest: in sanitizer builds its shadow
  // memory alone is terabytes of address space.
  if (TF_ASAN) limits.memory_mb = 0;
  TF_ASSIGN_OR_RETURN(std::vector<std::string> command,
                      compiler::SandboxedCommand(argv, work_dir, {nvrtc_path_}, limits, &options));
  TF_ASSIGN_OR_RETURN(ProcessResult run, RunProcess(command, options));
  compiler::CompileOutcome outcome;
  outcome.ok = run.success();
  outcome.timed_out = run.timed_out;
  outcome.diagnostics = std::move(run.output);
  outcome.cpu_seconds = run.cpu_seconds;
  outcome.wall_seconds = run.wall_seconds;
  if (!outcome.ok) {
    outcome.diagnostics = ExplainPtxasFailure(outcome.diagnostics) + outcome.diagnostics;
    return outcome;
  }

  TF_ASSIGN_OR_RETURN(auto lowered, ReadLoweredNames(work_dir + "/" + names_path));
  std::filesystem::remove(work_dir + "/" + names_path);
  auto resources = ParsePtxasResourceUsage(outcome.diagnostics);
  for (const std::string& function : functions) {
    TF_ASSIGN_OR_RETURN(std::string symbol, LoweredName(lowered, function));
    outcome.kernels.push_back({symbol, resources[symbol]});
  }
  if (!reference.empty()) {
    TF_ASSIGN_OR_RETURN(outcome.reference_symbol, LoweredName(lowered, reference));
  }
  return outcome;
}

Status NvrtcToolchain::CheckResources(const v1::KernelSpec& spec, const v1::Config& config,
                                      const v1::Problem& problem,
                                      const v1::ResourceUsage& resources,
                                      const std::map<std::string, int64_t>& device) const {
  return nvidia::CheckResources(spec, config, problem, resources, device);
}

std::string CompileArch(const std::string& target_arch, const std::string& device_arch) {
  if (!target_arch.empty() || device_arch.empty()) return target_arch;
  // sm_90 and later have architecture-specific instructions (wgmma, setmaxnreg)
  // that only sm_XXa code may use; the job runs on this one architecture.
  static const std::regex kFamily("sm_([0-9]+)");
  std::smatch match;
  if (std::regex_match(device_arch, match, kFamily) && std::stoi(match[1]) >= 90) {
    return device_arch + "a";
  }
  return device_arch;
}

bool CodeRunsOn(const std::string& code_arch, const std::string& device_arch) {
  return code_arch == device_arch || code_arch == device_arch + "a";
}

Result<std::unique_ptr<compiler::Toolchain>> MakeNvrtcToolchain(const v1::KernelSpec& spec,
                                                                const std::string& device_arch) {
  TF_ASSIGN_OR_RETURN(std::unique_ptr<NvrtcToolchain> nvrtc,
                      NvrtcToolchain::Detect(CompileArch(spec.target().arch(), device_arch)));
  return std::unique_ptr<compiler::Toolchain>(std::move(nvrtc));
}

const vendors::CompileSide kCompileSide = {MakeNvrtcToolchain, CodeRunsOn};

}  // namespace tf::nvidia
