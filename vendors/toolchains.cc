#include "vendors/toolchains.h"

#include "vendors/cpu/host_toolchain.h"
#include "vendors/replay/replay_toolchain.h"
#ifdef TF_VENDOR_NVIDIA
#include "vendors/nvidia/nvrtc_toolchain.h"
#endif
#ifdef TF_VENDOR_AMD
#include "vendors/amd/hip_toolchain.h"
#endif

namespace tf::vendors {
namespace {

namespace v1 = ::tunefleet::v1;

using MakeFn = Result<std::unique_ptr<compiler::Toolchain>> (*)(const v1::KernelSpec& spec,
                                                                const std::string& device_arch);
using RunsOnFn = bool (*)(const std::string& code_arch, const std::string& device_arch);

struct LanguageRow {
  const char* language;
  const char* vendor;        // the device kind that runs its kernels
  const char* default_arch;  // for an unset target.arch; empty: the device's
  MakeFn make;               // null: the vendor is left out of this build
  RunsOnFn runs_on;          // null: only the same architecture
};

const LanguageRow kLanguages[] = {
    {"cpp", "cpu", "host", cpu::MakeHostToolchain, nullptr},
#ifdef TF_VENDOR_NVIDIA
    {"cuda", "nvidia", "", nvidia::MakeNvrtcToolchain, nvidia::CodeRunsOn},
#else
    {"cuda", "nvidia", "", nullptr, nullptr},
#endif
#ifdef TF_VENDOR_AMD
    {"hip", "amd", "", amd::MakeHipToolchain, amd::CodeRunsOn},
#else
    {"hip", "amd", "", nullptr, nullptr},
#endif
    {"replay", "replay", "", replay::MakeReplayToolchain, nullptr},
};

Result<const LanguageRow*> FindLanguage(const std::string& language) {
  std::string known;
  for (const LanguageRow& row : kLanguages) {
    if (language == row.language) return &row;
    known += known.empty() ? row.language : std::string(", ") + row.language;
  }
  return Status::InvalidArgument("language: '" + language + "' is not one of " + known);
}

}  // namespace

Result<std::unique_ptr<compiler::Toolchain>> MakeToolchain(const v1::KernelSpec& spec,
                                                           const std::string& device_arch) {
  TF_ASSIGN_OR_RETURN(const LanguageRow* row, FindLanguage(spec.language()));
  if (row->make == nullptr) {
    return Status::Unavailable("language: the " + spec.language() +
                               " toolchain is not available in this build");
  }
  return row->make(spec, device_arch);
}

std::vector<std::string> Languages() {
  std::vector<std::string> languages;
  for (const LanguageRow& row : kLanguages) languages.push_back(row.language);
  return languages;
}

std::map<std::string, std::string> ToolchainVersions(const std::string& vendor) {
  std::map<std::string, std::string> versions;
  for (const LanguageRow& row : kLanguages) {
    if (row.vendor != vendor || row.make == nullptr) continue;
    v1::KernelSpec spec;
    spec.set_language(row.language);
    auto toolchain = row.make(spec, "");
    if (toolchain.ok()) versions[row.language] = (*toolchain)->version();
  }
  return versions;
}

Status CompleteTarget(v1::KernelSpec* spec) {
  TF_ASSIGN_OR_RETURN(const LanguageRow* row, FindLanguage(spec->language()));
  v1::Target* target = spec->mutable_target();
  if (!target->vendor().empty() && target->vendor() != row->vendor) {
    return Status::InvalidArgument("target.vendor: '" + target->vendor() + "' devices do not run " +
                                   spec->language() + " kernels; " + row->vendor + " devices do");
  }
  target->set_vendor(row->vendor);
  if (target->arch().empty()) target->set_arch(row->default_arch);
  return Status::Ok();
}

bool CodeRunsOn(const v1::KernelSpec& spec, const std::string& code_arch,
                const std::string& device_arch) {
  if (code_arch.empty() || code_arch == device_arch) return true;
  auto row = FindLanguage(spec.language());
  return row.ok() && (*row)->runs_on != nullptr && (*row)->runs_on(code_arch, device_arch);
}

}  // namespace tf::vendors
