// Per-kernel resource usage from ptxas's verbose report (`ptxas -v`, which
// NVRTC and nvcc pass through), e.g.
//   ptxas info    : Compiling entry function '_Z9transposeILi32ELi8EEvPKfPfxx' for 'sm_90'
//   ptxas info    : Function properties for _Z9transposeILi32ELi8EEvPKfPfxx
//   ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//   ptxas info    : Used 26 registers, used 1 barriers, 4224 bytes smem
// and the notes that the code will run slower than written, which ptxas
// prints ahead of the entry they name, e.g. on Hopper
//   ptxas info    : (C7512) Potential Performance Loss: wgmma.mma_async instructions are
//                   serialized due to insufficient register resources for the function '...'
// (one line), kept as performance_warnings "C7512: wgmma.mma_async ... resources".
// Reading the log rather than the CUBIN keeps the numbers exactly those the
// user sees when compiling by hand.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "tunefleet/v1/common.pb.h"

namespace tf::nvidia {

// Keyed by the kernel's mangled name; kernels the log does not mention are
// absent. Lines that are not part of the report are ignored.
std::map<std::string, ::tunefleet::v1::ResourceUsage> ParsePtxasResourceUsage(std::string_view log);

// A kernel may declare at most this much static shared memory on every
// architecture; more must be dynamic.
inline constexpr int64_t kMaxStaticSharedBytes = 48 << 10;

// What a failed compile's log leaves unsaid: NVRTC (CUDA 13) fails a kernel
// whose static shared memory is over the limit with only ptxas's info lines.
// Returns an "error:" line per such kernel of `log`, empty when none is.
std::string ExplainPtxasFailure(std::string_view log);

}  // namespace tf::nvidia
