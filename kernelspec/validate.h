// Semantic checks of a submitted spec. The coordinator runs them on every job
// (the client may be anyone), so the later stages can rely on what they check.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "tunefleet/v1/spec.pb.h"

namespace tf::kernelspec {

namespace v1 = ::tunefleet::v1;

struct SpecLimits {
  int64_t max_spec_bytes = 256 << 10;  // the spec message itself, checked first
  int64_t max_source_bytes = 4 << 20;  // all sources together
  int max_source_files = 256;
  uint64_t max_space_size = 1'000'000;   // cartesian, unless sampled with search.max_candidates
  int64_t max_buffer_bytes = 1LL << 30;  // each buffer, for every problem
  int max_problems = 64;
  int max_params = 32;

  // No limit at all: what is wrong with a spec apart from its size (`tunefleet
  // spec`, whose coordinator checks sizes by its own limits).
  static SpecLimits None();
};

// Reports every problem found, one per line, each naming its field:
// "buffers.C.count: 'M*X' uses 'X', which is not a problem variable".
Status ValidateSpec(const v1::KernelSpec& spec, const std::vector<v1::SourceFile>& sources,
                    const SpecLimits& limits);

// Bytes of all of `spec`'s buffers for `problem` (counts evaluated with the
// problem's variables), saturating at INT64_MAX; errors name the buffer.
Result<int64_t> ProblemBufferBytes(const v1::KernelSpec& spec, const v1::Problem& problem);

// Bytes per element of f32 f64 f16 bf16 i8 i32 i64 u8 u32; 0 if unknown.
size_t DtypeSize(std::string_view dtype);

// Product of the parameter sizes, saturating at UINT64_MAX.
uint64_t CartesianSize(const v1::KernelSpec& spec);

// Not empty, not absolute, no empty, "." or ".." component, no quote,
// backslash or control character: safe to join under a folder and to name
// in an #include.
bool IsSafeRelativePath(std::string_view path);

bool IsIdentifier(std::string_view name);

}  // namespace tf::kernelspec
