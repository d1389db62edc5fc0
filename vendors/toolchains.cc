#include "vendors/toolchains.h"

#include "vendors/cpu/host_toolchain.h"
#include "vendors/replay/replay_toolchain.h"
#ifdef TF_VENDOR_NVIDIA
#include "vendors/nvidia/nvrtc_toolchain.h"
#endif

namespace tf::vendors {
namespace {

using MakeFn = Result<std::unique_ptr<compiler::Toolchain>> (*)(
    const ::tunefleet::v1::KernelSpec& spec, const std::string& device_arch);

struct LanguageRow {
  const char* language;
  MakeFn make;  // null: the vendor is left out of this build
};

const LanguageRow kLanguages[] = {
    {"cpp", cpu::MakeHostToolchain},
#ifdef TF_VENDOR_NVIDIA
    {"cuda", nvidia::MakeNvrtcToolchain},
#else
    {"cuda", nullptr},
#endif
    {"hip", nullptr},
    {"replay", replay::MakeReplayToolchain},
};

}  // namespace

Result<std::unique_ptr<compiler::Toolchain>> MakeToolchain(const ::tunefleet::v1::KernelSpec& spec,
                                                           const std::string& device_arch) {
  std::string known;
  for (const LanguageRow& row : kLanguages) {
    if (spec.language() == row.language) {
      if (row.make == nullptr) {
        return Status::Unavailable("language: the " + spec.language() +
                                   " toolchain is not available in this build");
      }
      return row.make(spec, device_arch);
    }
    known += known.empty() ? row.language : std::string(", ") + row.language;
  }
  return Status::InvalidArgument("language: '" + spec.language() + "' is not one of " + known);
}

}  // namespace tf::vendors
