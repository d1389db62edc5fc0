#include "vendors/cpu/host_toolchain.h"

#include <regex>

#include "common/subprocess.h"
#include "compiler/compile_flags.h"
#include "compiler/compile_sandbox.h"
#include "compiler/element_type.h"
#include "compiler/source_copies.h"
#include "compiler/source_tree.h"
#include "compiler/tool_version.h"
#include "compiler/toolchain_checks.h"
#include "kernelspec/config.h"
#include "vendors/cpu/cpu_vendor.h"

namespace tf::cpu {
namespace {

// Before the user's options, so that theirs win (g++ takes the last -O, -march
// and -std). Hidden visibility keeps template instantiations out of the
// dynamic symbol table: only the exported wrappers are visible, and artifacts
// of different jobs loaded into one runner cannot interpose each other.
const char* const kBaseFlags[] = {"-std=c++20", "-O3",   "-march=native",      "-fPIC",
                                  "-shared",    "-pipe", "-fvisibility=hidden"};

bool IsAllowedFlag(const std::string& flag) {
  static const std::regex kAllowed(
      std::string("-O[0-3s]|-Ofast"
                  "|-(march|mtune)=[A-Za-z0-9_.+-]+"
                  "|-m(no-)?[a-z0-9][a-z0-9.-]*"
                  "|-f(no-[a-z0-9-]+|fast-math|unroll-loops|unroll-all-loops|openmp|openmp-simd"
                  "|omit-frame-pointer|tree-vectorize|tree-loop-vectorize|strict-aliasing"
                  "|peel-loops|prefetch-loop-arrays|loop-interchange|ipa-pta"
                  "|vect-cost-model=[a-z]+)"
                  "|-std=(c|gnu)\\+\\+(17|20|23|2a|2b)"
                  "|-W(no-)?[a-z][a-z0-9-]*(=[0-9]+)?"
                  "|-g[0-3]?|") +
      compiler::kDefineFlagsPattern);
  return std::regex_match(flag, kAllowed);
}

Result<std::vector<std::string>> UserFlags(const v1::KernelSpec& spec) {
  static const std::string kAllowedSummary =
      "-O0..-O3, -Os, -Ofast, -march=, -mtune=, -m<isa feature>, -fno-<x>, -ffast-math, "
      "-funroll-loops and similar optimisations, " +
      std::string(compiler::kDefineFlagsSummary) +
      ", -std=c++17|20|23, -W<warning>, -g, -I<relative dir>";
  return compiler::AllowedCompileFlags(spec, IsAllowedFlag, "host-g++", kAllowedSummary);
}

// The C++ type of each buffer element type (bf16 as its raw bits).
constexpr compiler::DtypeText kElementTypes[] = {
    {"f32", "float"},     {"f64", "double"}, {"f16", "_Float16"},
    {"bf16", "uint16_t"}, {"i8", "int8_t"},  {"i32", "int32_t"},
    {"i64", "int64_t"},   {"u8", "uint8_t"}, {"u32", "uint32_t"}};

// "static_cast<const float*>(b[0]), static_cast<float*>(b[1]), s[0], s[1]":
// the arguments every wrapper passes, given its parameters `b` and `s`.
Result<std::string> CallArguments(const v1::KernelSpec& spec) {
  std::string args;
  auto append = [&args](const std::string& arg) { args += (args.empty() ? "" : ", ") + arg; };
  for (int i = 0; i < spec.buffers_size(); ++i) {
    const v1::Buffer& buffer = spec.buffers(i);
    TF_ASSIGN_OR_RETURN(std::string type, compiler::TextForDtype(buffer, kElementTypes));
    append("static_cast<" + std::string(buffer.output() ? "" : "const ") + type + "*>(b[" +
           std::to_string(i) + "])");
  }
  for (size_t i = 0; i < kernelspec::ScalarNames(spec).size(); ++i) {
    append("s[" + std::to_string(i) + "]");
  }
  return args;
}

std::string ExportedFunction(const std::string& symbol, const std::string& comment,
                             const std::string& callee, const std::string& args) {
  return "// " + comment + "\nTF_EXPORT void " + symbol +
         "([[maybe_unused]] void* const* b, [[maybe_unused]] const int64_t* s) {\n  " + callee +
         "(" + args + ");\n}\n\n";
}

}  // namespace

Result<std::unique_ptr<HostToolchain>> HostToolchain::Detect(const std::string& compiler) {
  auto version = compiler::ToolVersion(compiler);
  if (!version.ok()) {
    return Status::Unavailable("host-g++ toolchain: cannot run '" + compiler +
                               " --version' (is g++ installed?): " + version.status().message());
  }
  return std::unique_ptr<HostToolchain>(new HostToolchain(compiler, *version));
}

Status HostToolchain::Validate(const v1::KernelSpec& spec) const {
  TF_RETURN_IF_ERROR(compiler::CheckMainSource(spec));
  // CPU devices report arch host: any other would match no device.
  if (!spec.target().arch().empty() && spec.target().arch() != target()) {
    return Status::InvalidArgument("target.arch: '" + spec.target().arch() +
                                   "': " + spec.language() +
                                   " kernels are built for the CPU they run on, arch host");
  }
  if (spec.tensor_maps_size() > 0) {
    return Status::InvalidArgument("tensor_maps: " + spec.language() +
                                   " kernels take no tensor maps; they are for GPU toolchains");
  }
  TF_RETURN_IF_ERROR(CallArguments(spec).status());
  return UserFlags(spec).status();
}

Result<std::string> HostToolchain::GenerateBatch(const v1::KernelSpec& spec,
                                                 const std::vector<v1::SourceFile>& sources,
                                                 const std::vector<v1::Config>& configs) const {
  TF_ASSIGN_OR_RETURN(std::string args, CallArguments(spec));
  std::string tu = "// Generated by TuneFleet " + name() + ": " + std::to_string(configs.size()) +
                   " candidates of kernel " + spec.name() + ".\n#include <cstdint>\n";
  TF_ASSIGN_OR_RETURN(std::string source_text, compiler::BatchSourceText(spec, sources, configs));
  tu += source_text;
  tu += "\n#define TF_EXPORT extern \"C\" __attribute__((visibility(\"default\")))\n\n";
  TF_ASSIGN_OR_RETURN(std::vector<std::string> callees,
                      compiler::BatchKernelFunctions(spec, configs));
  for (size_t index = 0; index < configs.size(); ++index) {
    tu += ExportedFunction(kernelspec::CandidateSymbol(configs[index]),
                           kernelspec::ConfigKey(configs[index]), callees[index], args);
  }
  if (const std::string reference = compiler::BatchReferenceFunction(spec); !reference.empty()) {
    tu += ExportedFunction(kernelspec::kReferenceSymbol, "reference", reference, args);
  }
  return tu;
}

Result<compiler::CompileOutcome> HostToolchain::Compile(
    const std::string& work_dir, const std::string& tu_path, const std::string& out_path,
    const v1::KernelSpec& spec, const std::vector<v1::Config>& configs, double timeout_s) const {
  TF_ASSIGN_OR_RETURN(std::vector<std::string> flags, UserFlags(spec));
  std::vector<std::string> argv = {compiler_};
  argv.insert(argv.end(), std::begin(kBaseFlags), std::end(kBaseFlags));
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {"-o", out_path, tu_path});
  RunOptions options;
  options.timeout_s = timeout_s;
  TF_ASSIGN_OR_RETURN(
      std::vector<std::string> command,
      compiler::SandboxedCommand(argv, work_dir, {}, compiler::CompileLimits(), &options));
  TF_ASSIGN_OR_RETURN(ProcessResult run, RunProcess(command, options));
  compiler::CompileOutcome outcome;
  outcome.ok = run.success();
  outcome.timed_out = run.timed_out;
  outcome.diagnostics = std::move(run.output);
  outcome.cpu_seconds = run.cpu_seconds;
  outcome.wall_seconds = run.wall_seconds;
  if (outcome.ok) {
    for (const auto& config : configs)
      outcome.kernels.push_back({kernelspec::CandidateSymbol(config), {}});
    if (!spec.verify().reference().empty()) outcome.reference_symbol = kernelspec::kReferenceSymbol;
  }
  return outcome;
}

Result<std::unique_ptr<compiler::Toolchain>> MakeHostToolchain(const v1::KernelSpec&,
                                                               const std::string&) {
  TF_ASSIGN_OR_RETURN(std::unique_ptr<HostToolchain> host, HostToolchain::Detect());
  return std::unique_ptr<compiler::Toolchain>(std::move(host));
}

const vendors::CompileSide kCompileSide = {MakeHostToolchain, nullptr};

}  // namespace tf::cpu
