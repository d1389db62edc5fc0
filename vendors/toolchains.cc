#include "vendors/toolchains.h"

#include <algorithm>
#include <cstring>

#include "vendors/vendor.h"

namespace tf::vendors {
namespace {

namespace v1 = ::tunefleet::v1;

struct LanguageRow {
  const char* language;
  const char* vendor;        // the device kind that runs its kernels
  const char* default_arch;  // for an unset target.arch; empty: the device's
  MakeToolchainFn make;      // null: the vendor is switched off in this build
  RunsOnFn runs_on;          // null: only the same architecture
};

// Every vendor's languages, by name.
const std::vector<LanguageRow>& LanguageRows() {
  static const std::vector<LanguageRow> kRows = [] {
    std::vector<LanguageRow> rows;
    for (const VendorRow& vendor : VendorRows()) {
      const CompileSide* side = vendor.compile_side;
      for (const Language& language : vendor.names->languages) {
        rows.push_back({language.name, vendor.names->vendor, language.default_arch,
                        side ? side->make : nullptr, side ? side->runs_on : nullptr});
      }
    }
    std::sort(rows.begin(), rows.end(), [](const LanguageRow& a, const LanguageRow& b) {
      return std::strcmp(a.language, b.language) < 0;
    });
    return rows;
  }();
  return kRows;
}

Result<const LanguageRow*> FindLanguage(const std::string& language) {
  std::string known;
  for (const LanguageRow& row : LanguageRows()) {
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
  for (const LanguageRow& row : LanguageRows()) languages.push_back(row.language);
  return languages;
}

std::map<std::string, std::string> ToolchainVersions(const std::string& vendor) {
  std::map<std::string, std::string> versions;
  for (const LanguageRow& row : LanguageRows()) {
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
