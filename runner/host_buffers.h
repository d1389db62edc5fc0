// Host memory for a kernel's buffers, typed by the spec's dtype names (f32
// f64 f16 bf16 i8 i32 i64 u8 u32): filled as the spec says, poisoned before a
// correctness run, and compared element by element against the reference.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"
#include "tunefleet/v1/spec.pb.h"

namespace tf::runner {

namespace v1 = ::tunefleet::v1;

enum class Dtype { kF32, kF64, kF16, kBF16, kI8, kI32, kI64, kU8, kU32 };

// The spec's name of `dtype` ("f32", ...).
std::string_view DtypeName(Dtype dtype);

class HostBuffer {
 public:
  // Cache-line aligned, uninitialised.
  static Result<HostBuffer> Allocate(std::string_view dtype, int64_t count);
  // Same dtype and count as `other`, uninitialised.
  static Result<HostBuffer> AllocateLike(const HostBuffer& other);

  Dtype dtype() const { return dtype_; }
  int64_t count() const { return count_; }
  size_t bytes() const { return bytes_; }
  void* data() { return data_.get(); }
  const void* data() const { return data_.get(); }

  // Element i converted to double (f16 and bf16 included).
  double Get(int64_t i) const;

  // Fills per buffer.init(): random (default; uniform in [random_min,
  // random_max], or a dtype default range when both are 0, so never all
  // zeros), zeros, ones or iota. Same seed, same contents.
  Status Fill(const v1::Buffer& buffer, uint64_t seed);
  // NaN in every float element, 0xA5 bytes in integers: an output the kernel
  // never wrote cannot pass for a result.
  void Poison();
  // Both buffers have the same dtype and count.
  void CopyFrom(const HostBuffer& other);

 private:
  HostBuffer(Dtype dtype, int64_t count, size_t bytes, void* data)
      : dtype_(dtype), count_(count), bytes_(bytes), data_(data, &std::free) {}

  Dtype dtype_;
  int64_t count_;
  size_t bytes_;
  std::unique_ptr<void, decltype(&std::free)> data_;
};

// Deterministic seed of a buffer's inputs for one problem shape.
uint64_t InputSeed(std::string_view buffer_name, std::string_view problem_key);

struct Comparison {
  int64_t count = 0;  // elements compared
  int64_t mismatches = 0;
  int64_t first_mismatch = -1;   // element index
  double got = 0, expected = 0;  // at first_mismatch
  double max_abs_error = 0;      // infinity when an element is NaN where the reference is not
};

// Element i matches when |out - ref| <= atol + rtol * |ref|.
Comparison Compare(const HostBuffer& out, const HostBuffer& ref, double rtol, double atol);

}  // namespace tf::runner
