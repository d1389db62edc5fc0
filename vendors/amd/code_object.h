// What `llvm-readelf --notes --relocs --symbols` says of an AMDGPU code
// object: each kernel's resources from the AMDGPU metadata note, e.g.
//   amdhsa.kernels:
//     - .agpr_count: 0
//       .group_segment_fixed_size: 4224        (LDS bytes)
//       .max_flat_workgroup_size: 1024
//       .name: _Z9transposeILi32ELi8EEvPKfPfll
//       .private_segment_fixed_size: 0         (scratch bytes per lane)
//       .sgpr_count: 20
//       .sgpr_spill_count: 0
//       .vgpr_count: 12
//       .vgpr_spill_count: 0
//       .wavefront_size: 64
// and which kernel each marker variable points at. The HIP toolchain gives
// every candidate a device variable holding its kernel's address
// (tf_candidate_<i>); the linker turns the address into a relocation, so the
// variable's relocation names the mangled kernel the compiler instantiated,
// as NVRTC's lowered names do for CUDA.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "common/status.h"
#include "tunefleet/v1/common.pb.h"

namespace tf::amd {

struct CodeObjectReport {
  // By the kernel's mangled name. Spills are counted as 4 bytes of scratch
  // per spilled 32-bit register, VGPR or SGPR, in spill_store_bytes.
  std::map<std::string, ::tunefleet::v1::ResourceUsage> kernels;
  // Marker variable's symbol -> the kernel symbol its value points at.
  std::map<std::string, std::string> markers;
};

// InvalidArgument when the text has no AMDGPU metadata or it does not parse.
Result<CodeObjectReport> ParseReadelfReport(std::string_view text);

// The symbol of a file-local device variable `name` as clang mangles it
// ("tf_candidate_3" -> "_ZL14tf_candidate_3").
std::string LocalVariableSymbol(const std::string& name);

}  // namespace tf::amd
