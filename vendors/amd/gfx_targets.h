// The AMD GPU targets TuneFleet compiles for, with what the compiler and the
// resource check need to know of each that neither the code object nor HIP's
// device properties say reliably: the ISA version the device libraries are
// specialised for, the wavefront size, and the register file.
#pragma once

#include <span>
#include <string>

namespace tf::amd {

struct GfxTarget {
  const char* name;         // "gfx942", as --offload-arch and gcnArchName write it
  int isa_version;          // __oclc_ISA_version: 9402 for gfx942, 11000 for gfx1100
  int wave_size;            // threads per wavefront as HIP compiles by default
  int simds;                // SIMDs one workgroup spreads over (a CU, or a WGP on gfx10+)
  int vgprs_per_simd_lane;  // register file of one SIMD, 32-bit registers per lane
                            // (arch and accumulation VGPRs together on gfx90a/gfx94x)
  bool unified_agprs;       // AGPRs are allocated from the same file as VGPRs
  int lds_bytes;            // LDS one workgroup may use
};

// The target named by `arch`, ignoring target features after a colon
// ("gfx90a:sramecc+:xnack-" is gfx90a); null when TuneFleet does not build
// for it.
const GfxTarget* FindGfxTarget(const std::string& arch);

// Every target, in the order of the names below.
std::span<const GfxTarget> GfxTargets();

// "gfx90a, gfx940, gfx942, gfx1030, gfx1100", for error messages.
std::string GfxTargetNames();

}  // namespace tf::amd
