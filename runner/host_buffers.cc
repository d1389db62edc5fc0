#include "runner/host_buffers.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace tf::runner {
namespace {

struct DtypeInfo {
  std::string_view name;
  Dtype dtype;
  size_t size;
};

constexpr DtypeInfo kDtypes[] = {
    {"f32", Dtype::kF32, 4},   {"f64", Dtype::kF64, 8}, {"f16", Dtype::kF16, 2},
    {"bf16", Dtype::kBF16, 2}, {"i8", Dtype::kI8, 1},   {"i32", Dtype::kI32, 4},
    {"i64", Dtype::kI64, 8},   {"u8", Dtype::kU8, 1},   {"u32", Dtype::kU32, 4},
};

constexpr size_t kAlignment = 64;

bool IsFloat(Dtype dtype) {
  return dtype == Dtype::kF32 || dtype == Dtype::kF64 || dtype == Dtype::kF16 ||
         dtype == Dtype::kBF16;
}

float Bf16ToFloat(uint16_t bits) { return std::bit_cast<float>(uint32_t{bits} << 16); }

// Rounds to nearest even, as hardware conversions do.
uint16_t FloatToBf16(float value) {
  uint32_t bits = std::bit_cast<uint32_t>(value);
  if (std::isnan(value)) return 0x7FC0;
  return static_cast<uint16_t>((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16);
}

// IEEE binary16 in software, rounding to nearest even like a _Float16 cast:
// clang 14 (the sanitizer build's compiler) has no _Float16 on x86-64.
// After F. Giesen's float_to_half_fast3_rtne and half_to_float.
uint16_t FloatToF16(float value) {
  constexpr uint32_t kInfinity = 255u << 23;
  constexpr uint32_t kF16Max = (127u + 16) << 23;  // 65536: rounds to infinity
  constexpr uint32_t kDenormMagicBits = ((127u - 15) + (23 - 10) + 1) << 23;
  uint32_t bits = std::bit_cast<uint32_t>(value);
  const uint32_t sign = bits & 0x80000000u;
  bits ^= sign;
  uint16_t half;
  if (bits >= kF16Max) {
    half = bits > kInfinity ? 0x7E00 : 0x7C00;  // NaN stays NaN, the rest is infinity
  } else if (bits < (113u << 23)) {
    // Subnormal half: the float addition does the rounding.
    const float sum = std::bit_cast<float>(bits) + std::bit_cast<float>(kDenormMagicBits);
    half = static_cast<uint16_t>(std::bit_cast<uint32_t>(sum) - kDenormMagicBits);
  } else {
    const uint32_t odd = (bits >> 13) & 1;
    bits += (static_cast<uint32_t>(15 - 127) << 23) + 0xFFF + odd;
    half = static_cast<uint16_t>(bits >> 13);
  }
  return static_cast<uint16_t>(half | (sign >> 16));
}

float F16ToFloat(uint16_t half) {
  constexpr uint32_t kExponent = 0x7C00u << 13;
  uint32_t bits = (half & 0x7FFFu) << 13;
  const uint32_t exponent = bits & kExponent;
  bits += (127u - 15) << 23;
  if (exponent == kExponent) {
    bits += (128u - 16) << 23;  // infinity or NaN
  } else if (exponent == 0) {   // zero or subnormal: renormalise
    bits += 1u << 23;
    bits = std::bit_cast<uint32_t>(std::bit_cast<float>(bits) - std::bit_cast<float>(113u << 23));
  }
  return std::bit_cast<float>(bits | (uint32_t{half} & 0x8000u) << 16);
}

// splitmix64: fast, and the same sequence on every platform.
uint64_t NextRandom(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void Set(void* data, Dtype dtype, int64_t i, double value) {
  switch (dtype) {
    case Dtype::kF32:
      static_cast<float*>(data)[i] = static_cast<float>(value);
      break;
    case Dtype::kF64:
      static_cast<double*>(data)[i] = value;
      break;
    case Dtype::kF16:
      static_cast<uint16_t*>(data)[i] = FloatToF16(static_cast<float>(value));
      break;
    case Dtype::kBF16:
      static_cast<uint16_t*>(data)[i] = FloatToBf16(static_cast<float>(value));
      break;
    case Dtype::kI8:
      static_cast<int8_t*>(data)[i] = static_cast<int8_t>(value);
      break;
    case Dtype::kI32:
      static_cast<int32_t*>(data)[i] = static_cast<int32_t>(value);
      break;
    case Dtype::kI64:
      static_cast<int64_t*>(data)[i] = static_cast<int64_t>(value);
      break;
    case Dtype::kU8:
      static_cast<uint8_t*>(data)[i] = static_cast<uint8_t>(value);
      break;
    case Dtype::kU32:
      static_cast<uint32_t*>(data)[i] = static_cast<uint32_t>(value);
      break;
  }
}

// Small ranges keep integer kernels (dot products, sums) clear of overflow.
void DefaultRange(Dtype dtype, double* lo, double* hi) {
  if (IsFloat(dtype)) {
    *lo = -1, *hi = 1;
  } else if (dtype == Dtype::kU8 || dtype == Dtype::kU32) {
    *lo = 0, *hi = 15;
  } else {
    *lo = -8, *hi = 8;
  }
}

}  // namespace

std::string_view DtypeName(Dtype dtype) {
  for (const DtypeInfo& info : kDtypes) {
    if (info.dtype == dtype) return info.name;
  }
  return "?";
}

Result<HostBuffer> HostBuffer::Allocate(std::string_view dtype, int64_t count) {
  for (const DtypeInfo& info : kDtypes) {
    if (info.name != dtype) continue;
    if (count < 0) {
      return Status::InvalidArgument("buffer element count " + std::to_string(count) +
                                     " is negative");
    }
    size_t bytes = static_cast<size_t>(count) * info.size;
    size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
    void* data = std::aligned_alloc(kAlignment, rounded == 0 ? kAlignment : rounded);
    if (data == nullptr) {
      return Status::ResourceExhausted("cannot allocate " + std::to_string(bytes) +
                                       " bytes for a buffer");
    }
    return HostBuffer(info.dtype, count, bytes, data);
  }
  return Status::InvalidArgument("unknown dtype '" + std::string(dtype) +
                                 "'; known: f32 f64 f16 bf16 i8 i32 i64 u8 u32");
}

Result<HostBuffer> HostBuffer::AllocateLike(const HostBuffer& other) {
  for (const DtypeInfo& info : kDtypes) {
    if (info.dtype == other.dtype_) return Allocate(info.name, other.count_);
  }
  return Status::Internal("buffer of unknown dtype");
}

double HostBuffer::Get(int64_t i) const {
  const void* p = data_.get();
  switch (dtype_) {
    case Dtype::kF32:
      return static_cast<const float*>(p)[i];
    case Dtype::kF64:
      return static_cast<const double*>(p)[i];
    case Dtype::kF16:
      return F16ToFloat(static_cast<const uint16_t*>(p)[i]);
    case Dtype::kBF16:
      return Bf16ToFloat(static_cast<const uint16_t*>(p)[i]);
    case Dtype::kI8:
      return static_cast<const int8_t*>(p)[i];
    case Dtype::kI32:
      return static_cast<const int32_t*>(p)[i];
    case Dtype::kI64:
      return static_cast<double>(static_cast<const int64_t*>(p)[i]);
    case Dtype::kU8:
      return static_cast<const uint8_t*>(p)[i];
    case Dtype::kU32:
      return static_cast<const uint32_t*>(p)[i];
  }
  return 0;
}

Status HostBuffer::Fill(const v1::Buffer& buffer, uint64_t seed) {
  const std::string& init = buffer.init();
  void* p = data_.get();
  if (init == "zeros") {
    std::memset(p, 0, bytes_);  // all-zero bytes are 0 in every dtype
  } else if (init == "ones" || init == "iota") {
    for (int64_t i = 0; i < count_; ++i) Set(p, dtype_, i, init == "ones" ? 1.0 : double(i));
  } else if (init.empty() || init == "random") {
    double lo = buffer.random_min(), hi = buffer.random_max();
    if (lo == 0 && hi == 0) DefaultRange(dtype_, &lo, &hi);
    if (lo > hi) {
      return Status::InvalidArgument("buffer '" + buffer.name() + "': random_min " +
                                     std::to_string(lo) + " exceeds random_max " +
                                     std::to_string(hi));
    }
    uint64_t state = seed;
    if (IsFloat(dtype_)) {
      for (int64_t i = 0; i < count_; ++i) {
        double unit = (NextRandom(state) >> 11) * 0x1.0p-53;
        Set(p, dtype_, i, lo + (hi - lo) * unit);
      }
    } else {
      const int64_t low = static_cast<int64_t>(std::ceil(lo));
      const uint64_t span = static_cast<uint64_t>(std::floor(hi) - low) + 1;
      for (int64_t i = 0; i < count_; ++i) {
        Set(p, dtype_, i, static_cast<double>(low + int64_t(NextRandom(state) % span)));
      }
    }
  } else {
    return Status::InvalidArgument("buffer '" + buffer.name() + "': unknown init '" + init +
                                   "'; known: random zeros ones iota");
  }
  return Status::Ok();
}

void HostBuffer::Poison() {
  void* p = data_.get();
  switch (dtype_) {
    case Dtype::kF32:
      std::fill_n(static_cast<float*>(p), count_, std::numeric_limits<float>::quiet_NaN());
      break;
    case Dtype::kF64:
      std::fill_n(static_cast<double*>(p), count_, std::numeric_limits<double>::quiet_NaN());
      break;
    case Dtype::kF16:
      std::fill_n(static_cast<uint16_t*>(p), count_, uint16_t{0x7E00});
      break;
    case Dtype::kBF16:
      std::fill_n(static_cast<uint16_t*>(p), count_, uint16_t{0x7FC0});
      break;
    default:
      std::memset(p, 0xA5, bytes_);
  }
}

void HostBuffer::CopyFrom(const HostBuffer& other) {
  std::memcpy(data_.get(), other.data_.get(), std::min(bytes_, other.bytes_));
}

uint64_t InputSeed(std::string_view buffer_name, std::string_view problem_key) {
  uint64_t hash = 0xCBF29CE484222325ull;  // FNV-1a
  auto mix = [&hash](std::string_view text) {
    for (unsigned char c : text) hash = (hash ^ c) * 0x100000001B3ull;
  };
  mix(buffer_name);
  mix(std::string_view("\0", 1));
  mix(problem_key);
  return hash;
}

Comparison Compare(const HostBuffer& out, const HostBuffer& ref, double rtol, double atol) {
  Comparison result;
  result.count = std::min(out.count(), ref.count());
  for (int64_t i = 0; i < result.count; ++i) {
    const double got = out.Get(i), expected = ref.Get(i);
    if (got == expected || (std::isnan(got) && std::isnan(expected))) continue;
    const double diff = std::fabs(got - expected);
    const double error = std::isnan(diff) ? std::numeric_limits<double>::infinity() : diff;
    result.max_abs_error = std::max(result.max_abs_error, error);
    if (diff <= atol + rtol * std::fabs(expected)) continue;
    if (result.mismatches++ == 0) {
      result.first_mismatch = i;
      result.got = got;
      result.expected = expected;
    }
  }
  return result;
}

}  // namespace tf::runner
