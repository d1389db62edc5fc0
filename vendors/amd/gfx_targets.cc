#include "vendors/amd/gfx_targets.h"

namespace tf::amd {
namespace {

// From the AMD ISA manuals: CDNA2/3 SIMDs hold 512 registers per lane with
// AGPRs in the same file; RDNA2 1024 and RDNA3 1536 per lane in wave32, a
// workgroup spreading over the 4 SIMDs of a WGP (HIP's default mode).
const GfxTarget kTargets[] = {
    {"gfx90a", 9010, 64, 4, 512, true, 65536},     {"gfx940", 9400, 64, 4, 512, true, 65536},
    {"gfx942", 9402, 64, 4, 512, true, 65536},     {"gfx1030", 10300, 32, 4, 1024, false, 65536},
    {"gfx1100", 11000, 32, 4, 1536, false, 65536},
};

}  // namespace

std::span<const GfxTarget> GfxTargets() { return kTargets; }

const GfxTarget* FindGfxTarget(const std::string& arch) {
  const std::string name = arch.substr(0, arch.find(':'));
  for (const GfxTarget& target : kTargets) {
    if (name == target.name) return &target;
  }
  return nullptr;
}

std::string GfxTargetNames() {
  std::string names;
  for (const GfxTarget& target : kTargets)
    names += (names.empty() ? "" : ", ") + std::string(target.name);
  return names;
}

}  // namespace tf::amd
