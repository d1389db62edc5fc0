// A shared library around examples/cuda/attention/attention.cu for bench/attention/bench.py:
// a fixed set of configurations of the template, launched on the caller's stream with the
// tensor maps the service would encode, and the spec's fp32 reference kernel.
//
//   nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -Xcompiler -fPIC -shared \
//       bench/attention/attention_lib.cu -L/usr/local/cuda/lib64/stubs -lcuda -o attention.so
//
// Every function returns 0, a cudaError_t / CUresult value, or -1 for a configuration that is
// not compiled in.
#include <cuda.h>
#include <cuda_runtime.h>

#include "../../examples/cuda/attention/attention.cu"

namespace {

// BM, BN, STAGES, CONSUMERS, OVERLAP, compiled for both types: at D = 128 every template
// configuration the D = 128 specs allow (so that whatever TuneFleet picks can be timed here),
// at D = 64 a spread. Each runs with a grid of one block per tile or a persistent one
// (PERSISTENT, the specs' knob that only changes the grid).
#define TF_ATTENTION_CONFIGS_D128(X) \
  X(64, 64, 2, 1, 0)                 \
  X(64, 64, 3, 1, 0)                 \
  X(64, 64, 4, 1, 0)                 \
  X(64, 64, 2, 1, 1)                 \
  X(64, 64, 3, 1, 1)                 \
  X(64, 64, 4, 1, 1)                 \
  X(64, 128, 2, 1, 0)                \
  X(64, 128, 3, 1, 0)                \
  X(64, 128, 2, 1, 1)                \
  X(64, 128, 3, 1, 1)                \
  X(64, 176, 2, 1, 0)                \
  X(64, 176, 2, 1, 1)                \
  X(64, 192, 2, 1, 0)                \
  X(64, 192, 2, 1, 1)                \
  X(128, 64, 2, 2, 0)                \
  X(128, 64, 3, 2, 0)                \
  X(128, 64, 4, 2, 0)                \
  X(128, 64, 2, 2, 1)                \
  X(128, 64, 3, 2, 1)                \
  X(128, 64, 4, 2, 1)                \
  X(128, 64, 2, 2, 2)                \
  X(128, 64, 3, 2, 2)                \
  X(128, 64, 4, 2, 2)                \
  X(128, 128, 2, 2, 0)               \
  X(128, 128, 3, 2, 0)               \
  X(128, 128, 2, 2, 1)               \
  X(128, 128, 3, 2, 1)               \
  X(128, 128, 2, 2, 2)               \
  X(128, 128, 3, 2, 2)               \
  X(128, 176, 2, 2, 0)               \
  X(128, 176, 2, 2, 1)               \
  X(128, 176, 2, 2, 2)               \
  X(128, 192, 2, 2, 0)               \
  X(128, 192, 2, 2, 1)               \
  X(128, 192, 2, 2, 2)               \
  X(192, 64, 2, 3, 0)                \
  X(192, 64, 3, 3, 0)                \
  X(192, 64, 4, 3, 0)                \
  X(192, 64, 2, 3, 1)                \
  X(192, 64, 3, 3, 1)                \
  X(192, 64, 4, 3, 1)                \
  X(192, 64, 2, 3, 2)                \
  X(192, 64, 3, 3, 2)                \
  X(192, 64, 4, 3, 2)                \
  X(192, 128, 2, 3, 0)               \
  X(192, 128, 2, 3, 1)               \
  X(192, 128, 2, 3, 2)
#define TF_ATTENTION_CONFIGS_D64(X) \
  X(128, 128, 2, 2, 0)              \
  X(128, 128, 3, 2, 1)              \
  X(128, 128, 3, 2, 2)              \
  X(128, 64, 3, 2, 2)               \
  X(128, 64, 4, 2, 2)               \
  X(192, 64, 3, 3, 1)               \
  X(192, 64, 3, 3, 2)               \
  X(192, 128, 2, 3, 2)              \
  X(64, 128, 2, 1, 1)

constexpr int kConfigsD128[][5] = {
#define TF_ROW(bm, bn, st, c, ov) {bm, bn, st, c, ov},
    TF_ATTENTION_CONFIGS_D128(TF_ROW)};
constexpr int kConfigsD64[][5] = {TF_ATTENTION_CONFIGS_D64(TF_ROW)};
#undef TF_ROW
constexpr int kD128 = sizeof(kConfigsD128) / sizeof(kConfigsD128[0]);
constexpr int kD64 = sizeof(kConfigsD64) / sizeof(kConfigsD64[0]);

int EncodeMap(TmaDescriptor* map, bool bf16, void* base, long long rows, int d, int box_rows) {
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(d), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(d) * 2};
  const cuuint32_t box[2] = {64, static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t element_strides[2] = {1, 1};
  return cuTensorMapEncodeTiled(
      reinterpret_cast<CUtensorMap*>(map),
      bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, base, dims,
      strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

template <typename T, int D, int BM, int BN, int STAGES, int CONSUMERS, int OVERLAP>
int Launch(void* q, void* k, void* v, void* o, long long b, long long h, long long s,
           long long causal, bool persistent, cudaStream_t stream) {
  TmaDescriptor maps[3];
  const bool bf16 = hopper::kIsBf16<T>;
  int rc = EncodeMap(&maps[0], bf16, q, b * h * s, D, 64);
  if (rc == 0) rc = EncodeMap(&maps[1], bf16, k, b * h * s, D, BN);
  if (rc == 0) rc = EncodeMap(&maps[2], bf16, v, b * h * s, D, BN);
  if (rc != 0) return rc;
  auto kernel = attention<T, D, BM, BN, STAGES, CONSUMERS, OVERLAP>;
  const int smem = (BM + 2 * STAGES * BN) * D * 2 + 2048;
  rc = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  if (rc != 0) return rc;
  long long blocks = (s + BM - 1) / BM * b * h;
  if (persistent) {
    int device = 0, sms = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    blocks = blocks < sms ? blocks : sms;
  }
  kernel<<<static_cast<unsigned>(blocks), (CONSUMERS + 1) * 128, smem, stream>>>(
      static_cast<const T*>(q), static_cast<const T*>(k), static_cast<const T*>(v),
      static_cast<T*>(o), b, h, s, D, causal, maps[0], maps[1], maps[2]);
  return cudaGetLastError();
}

template <typename T, int D>
int LaunchConfig(const int* c, void* q, void* k, void* v, void* o, long long b, long long h,
                 long long s, long long causal, cudaStream_t stream) {
#define TF_CASE(bm, bn, st, cs, ov)                                                     \
  if (c[0] == bm && c[1] == bn && c[2] == st && c[3] == cs && c[4] == ov) {             \
    return Launch<T, D, bm, bn, st, cs, ov>(q, k, v, o, b, h, s, causal, c[5], stream); \
  }
  if constexpr (D == 128) {
    TF_ATTENTION_CONFIGS_D128(TF_CASE)
  } else {
    TF_ATTENTION_CONFIGS_D64(TF_CASE)
  }
#undef TF_CASE
  return -1;
}

}  // namespace

extern "C" {

int tf_attention_config_count(int d) { return 2 * (d == 128 ? kD128 : d == 64 ? kD64 : 0); }

// Writes head dimension d's configuration i as {BM, BN, STAGES, CONSUMERS, OVERLAP,
// PERSISTENT}.
int tf_attention_config(int d, int i, int* out) {
  if (i < 0 || i >= tf_attention_config_count(d)) return -1;
  for (int j = 0; j < 5; ++j) out[j] = d == 128 ? kConfigsD128[i / 2][j] : kConfigsD64[i / 2][j];
  out[5] = i % 2;
  return 0;
}

int tf_attention(int bf16, int d, const int* config, void* q, void* k, void* v, void* o,
                 long long b, long long h, long long s, long long causal, void* stream) {
  const auto st = static_cast<cudaStream_t>(stream);
  if (d == 64) {
    return bf16 ? LaunchConfig<__nv_bfloat16, 64>(config, q, k, v, o, b, h, s, causal, st)
                : LaunchConfig<__half, 64>(config, q, k, v, o, b, h, s, causal, st);
  }
  if (d == 128) {
    return bf16 ? LaunchConfig<__nv_bfloat16, 128>(config, q, k, v, o, b, h, s, causal, st)
                : LaunchConfig<__half, 128>(config, q, k, v, o, b, h, s, causal, st);
  }
  return -1;
}

// The spec's reference kernel, launched as the spec's verify section does.
int tf_attention_reference(int bf16, int d, void* q, void* k, void* v, void* o, long long b,
                           long long h, long long s, long long causal, void* stream) {
  const dim3 grid(static_cast<unsigned>((s + 31) / 32), static_cast<unsigned>(b * h));
  const auto st = static_cast<cudaStream_t>(stream);
#define TF_REF(T, D)                                                            \
  attention_reference<T, D>                                                     \
      <<<grid, 32, 0, st>>>(static_cast<const T*>(q), static_cast<const T*>(k), \
                            static_cast<const T*>(v), static_cast<T*>(o), b, h, s, D, causal)
  if (d == 64 && bf16)
    TF_REF(__nv_bfloat16, 64);
  else if (d == 64)
    TF_REF(__half, 64);
  else if (d == 128 && bf16)
    TF_REF(__nv_bfloat16, 128);
  else if (d == 128)
    TF_REF(__half, 128);
  else
    return -1;
#undef TF_REF
  return cudaGetLastError();
}

}  // extern "C"
