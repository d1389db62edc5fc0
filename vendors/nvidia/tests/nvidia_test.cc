// NVIDIA devices and the CUDA runner. Discovery is tested everywhere; the
// runner tests need a GPU and skip without one: they build a CUBIN with nvcc
// and run it through the real tunefleet-runner, as the worker does.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>

#include "common/files.h"
#include "common/subprocess.h"
#include "runner/host_buffers.h"
#include "tests/test_util.h"
#include "vendors/nvidia/nvidia_backend.h"
#include "worker/devices.h"
#include "worker/runner_supervisor.h"

namespace tf::worker {
namespace {

// Y = 2 * X over N elements, with faulty variants. Kernels are extern "C" so
// that their symbols are their names.
constexpr const char* kKernelSource = R"(
#include <cstdint>
__device__ int64_t Index() { return blockIdx.x * int64_t(blockDim.x) + threadIdx.x; }
extern "C" __global__ void reference(const float* x, float* y, int64_t n) {
  int64_t i = Index();
  if (i < n) y[i] = 2 * x[i];
}
extern "C" __global__ void good(const float* x, float* y, int64_t n) {
  int64_t i = Index();
  if (i < n) y[i] = 2 * x[i];
}
// Goes through dynamic shared memory, touching its last float.
extern "C" __global__ void good_shared(const float* x, float* y, int64_t n) {
  extern __shared__ float staged[];
  int64_t i = Index();
  staged[threadIdx.x] = i < n ? x[i] : 0;
  __syncthreads();
  if (threadIdx.x == 0) staged[16383] = staged[0];
  if (i < n) y[i] = 2 * staged[threadIdx.x];
}
extern "C" __global__ void wrong_at_7(const float* x, float* y, int64_t n) {
  int64_t i = Index();
  if (i < n) y[i] = 2 * x[i] + (i == 7);
}
extern "C" __global__ void writes_far_out_of_bounds(const float* x, float* y, int64_t n) {
  y[Index() + (int64_t(1) << 38)] = x[0];
}
// For the compare test: the second buffer's bytes over the first's.
extern "C" __global__ void copy_second_to_first(unsigned char* first, const unsigned char* second,
                                                int64_t bytes) {
  for (int64_t i = Index(); i < bytes; i += gridDim.x * int64_t(blockDim.x)) first[i] = second[i];
}
extern "C" __global__ void hangs(const float*, float*, int64_t) {
  for (;;) __nanosleep(1000);
}
// X as a row-major matrix 1024 floats wide: each block of 256 threads moves
// one 32 x 8 box into shared memory through the tensor map (TMA, sm_90).
struct alignas(64) TensorMap { unsigned long long opaque[16]; };
extern "C" __global__ void good_tma(const float* x, float* y, int64_t n,
                                    const __grid_constant__ TensorMap map) {
#if __CUDA_ARCH__ >= 900
  __shared__ alignas(128) float tile[8][32];
  __shared__ alignas(8) unsigned long long barrier;
  const int col = blockIdx.x * 32, row = blockIdx.y * 8;
  const unsigned bar = static_cast<unsigned>(__cvta_generic_to_shared(&barrier));
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar));
    asm volatile("fence.mbarrier_init.release.cluster;");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar),
                 "r"(int(sizeof tile)));
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3}], [%4];" ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(tile))),
        "l"(&map), "r"(col), "r"(row), "r"(bar)
        : "memory");
  }
  asm volatile(
      "{ .reg .pred done;\n"
      "WAIT_%=: mbarrier.try_wait.parity.shared::cta.b64 done, [%0], 0;\n"
      "@!done bra WAIT_%=; }" ::"r"(bar)
      : "memory");
  const int r = threadIdx.x / 32, c = threadIdx.x % 32;
  y[(row + r) * int64_t(1024) + col + c] = 2 * tile[r][c];
#endif
}
)";

constexpr int64_t kN = 1 << 20;

// A GPU of this host, or none.
std::optional<Device> FirstGpu() {
  auto devices = DiscoverDevices("nvidia", "");
  if (!devices.ok() || devices->empty()) return std::nullopt;
  return devices->front();
}

TEST(NvidiaDevicesTest, AllGpusMayBeNoneButNamedOrdinalsMustExist) {
  auto all = DiscoverDevices("cpu:1,nvidia", "rack7");
  ASSERT_TRUE(all.ok()) << "a host without GPUs still serves its CPU: " << all.status().ToString();
  ASSERT_GE(all->size(), 1u);
  EXPECT_EQ(all->front().info.vendor(), "cpu");
  for (size_t i = 1; i < all->size(); ++i) {
    const v1::DeviceInfo& info = (*all)[i].info;
    EXPECT_EQ(info.index(), static_cast<int>(i));
    EXPECT_EQ(info.vendor(), "nvidia");
    EXPECT_TRUE(info.arch().starts_with("sm_")) << info.arch();
    EXPECT_EQ(info.device_class().find(' '), std::string::npos) << info.device_class();
    EXPECT_TRUE(info.device_class().ends_with("/" + info.arch() + "/rack7")) << info.device_class();
    EXPECT_EQ(info.compute_units(), info.properties().at("sm_count"));
    EXPECT_EQ(info.properties().at("max_shared_mem_per_block"), 48 << 10);
    for (const char* name : {"max_shared_mem_per_block_optin", "regs_per_sm", "l2_bytes",
                             "memory_bus_width", "clock_khz", "cc_major"}) {
      EXPECT_GT(info.properties().at(name), 0) << name;
    }
  }
  // Every GPU nvidia-smi lists, not only the first (on a host of several).
  if (auto listed = RunProcess({"nvidia-smi", "-L"}, tf::testing::WithTimeout(60));
      listed.ok() && listed->success() && std::getenv("CUDA_VISIBLE_DEVICES") == nullptr) {
    size_t gpus = 0;
    for (size_t at = listed->output.find("GPU "); at != std::string::npos;
         at = listed->output.find("\nGPU ", at + 1)) {
      ++gpus;
    }
    EXPECT_EQ(all->size(), 1 + gpus) << listed->output;
  }

  auto missing = DiscoverDevices("nvidia:64", "");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("asks for NVIDIA GPU 64 but"), std::string::npos)
      << missing.status().message();

  EXPECT_NE(DiscoverDevices("nvidia:0,x", "").status().message().find("unknown device kind 'x'"),
            std::string::npos);
  EXPECT_NE(DiscoverDevices("nvidia:a", "").status().message().find("'a' in 'nvidia:a'"),
            std::string::npos);
}

class CudaRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    gpu_ = FirstGpu();
    if (!gpu_) GTEST_SKIP() << "no NVIDIA GPU found (libcuda not loadable or no device); skipping";
    dir_ = std::filesystem::temp_directory_path() / ("nvidia_test_" + std::to_string(getpid()));
    ASSERT_TRUE(MakeDirs(dir_).ok());
    ASSERT_TRUE(WriteFileAtomic(dir_ + "/kernels.cu", kKernelSource).ok());
    auto built = RunProcess({"/usr/local/cuda/bin/nvcc", "-cubin", "-arch=" + gpu_->info.arch(),
                             "-o", ArtifactPath(), dir_ + "/kernels.cu"},
                            {});
    ASSERT_TRUE(built.ok() && built->success()) << (built.ok() ? built->output : "");
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  std::string ArtifactPath() const { return dir_ + "/kernels.cubin"; }

  // Candidates are (symbol, threads per block, dynamic shared memory bytes).
  static v1::Lease MakeLease(const std::vector<std::tuple<std::string, int, int>>& candidates,
                             int64_t n = kN) {
    v1::Lease lease;
    lease.set_lease_id(1);
    lease.set_reference_symbol("reference");
    v1::KernelSpec& spec = *lease.mutable_spec();
    spec.set_name("scale");
    spec.set_language("cuda");
    spec.add_scalars("N");
    for (const char* name : {"X", "Y"}) {
      v1::Buffer* buffer = spec.add_buffers();
      buffer->set_name(name);
      buffer->set_dtype("f32");
      buffer->set_count("N");
      buffer->set_output(name == std::string("Y"));
    }
    spec.mutable_launch()->add_grid("ceil_div(N, BLOCK)");
    spec.mutable_launch()->add_block("BLOCK");
    spec.mutable_launch()->set_shared_mem_bytes("SMEM");
    spec.mutable_verify()->add_grid("ceil_div(N, 128)");
    spec.mutable_verify()->add_block("128");
    spec.mutable_verify()->set_rtol(1e-6);
    spec.mutable_objective()->set_flops("N");
    v1::BenchmarkSettings& bench = *spec.mutable_benchmark();
    bench.set_warmup_ms(1);
    bench.set_min_time_ms(2);
    bench.set_min_repeats(5);
    bench.set_flush_l2(true);
    bench.set_timeout_s(3);
    int64_t id = 1;
    for (const auto& [symbol, block, smem] : candidates) {
      v1::LeasedCandidate* c = lease.add_candidates();
      c->set_candidate_id(id++);
      c->set_symbol(symbol);
      for (const auto& [name, value] : {std::pair("BLOCK", block), std::pair("SMEM", smem)}) {
        v1::ParamSetting* setting = c->mutable_config()->add_settings();
        setting->set_name(name);
        setting->mutable_value()->set_int_value(value);
      }
      v1::ProblemVar* var = c->mutable_problem()->add_vars();
      var->set_name("N");
      var->set_value(n);
    }
    return lease;
  }

  std::map<int64_t, v1::CandidateResult> Supervise(const v1::Lease& lease) {
    RunnerSupervisor supervisor(TF_BINARY_DIR "/bin/tunefleet-runner", *gpu_);
    return Supervise(supervisor, lease);
  }
  std::map<int64_t, v1::CandidateResult> Supervise(RunnerSupervisor& supervisor,
                                                   const v1::Lease& lease) {
    return tf::testing::RunLease(supervisor, lease, ArtifactPath());
  }

  std::optional<Device> gpu_;
  std::string dir_;
};

TEST_F(CudaRunnerTest, FaultsStayWithTheirCandidateAndTheLeaseGoesOn) {
  auto results = Supervise(MakeLease({{"good", 256, 0},
                                      {"good_shared", 256, 64 << 10},  // above the 48 KB default
                                      {"wrong_at_7", 256, 0},
                                      {"good", 4096, 0},  // too many threads: launch refused
                                      {"good", 128, 0},
                                      {"writes_far_out_of_bounds", 256, 0},
                                      {"good", 256, 0},
                                      {"hangs", 256, 0},
                                      {"good", 512, 0}}));
  ASSERT_EQ(results.size(), 9u);
  for (int64_t id : {1, 2, 5, 7, 9}) {
    const v1::CandidateResult& r = results[id];
    ASSERT_EQ(r.status(), v1::RESULT_STATUS_OK) << id << ": " << r.error();
    EXPECT_EQ(r.max_abs_error(), 0) << id;
    const v1::TimingStats& t = r.timing();
    EXPECT_GE(t.repeats(), 5) << id;
    EXPECT_GT(t.min_ns(), 0) << id;
    EXPECT_LE(t.p10_ns(), t.median_ns()) << id;
    EXPECT_LE(t.median_ns(), t.p90_ns()) << id;
    EXPECT_DOUBLE_EQ(t.gflops(), kN / t.median_ns()) << id;
    EXPECT_GT(t.core_clock_mhz(), 0) << id << ": NVML should report the SM clock";
    EXPECT_GT(t.temperature_c(), 0) << id;
  }
  EXPECT_EQ(results[3].status(), v1::RESULT_STATUS_WRONG_RESULT);
  EXPECT_NE(results[3].error().find("first at index 7"), std::string::npos) << results[3].error();
  EXPECT_EQ(results[4].status(), v1::RESULT_STATUS_RUNTIME_FAILED);
  EXPECT_NE(results[4].error().find("cuLaunchKernel with grid (256,1,1), block (4096,1,1)"),
            std::string::npos)
      << results[4].error();
  EXPECT_EQ(results[6].status(), v1::RESULT_STATUS_RUNTIME_FAILED);
  EXPECT_NE(results[6].error().find("CUDA_ERROR_ILLEGAL_ADDRESS"), std::string::npos)
      << results[6].error();
  EXPECT_EQ(results[8].status(), v1::RESULT_STATUS_TIMEOUT);
  EXPECT_EQ(results[8].error(), "timed out after 3.0 s");
}

TEST_F(CudaRunnerTest, TensorMapsAreEncodedPerCandidateAndPassedAfterTheScalars) {
  if (gpu_->info.properties().at("cc_major") < 9) GTEST_SKIP() << "TMA needs sm_90 or later";
  v1::Lease lease = MakeLease({{"good_tma", 256, 0}, {"good_tma", 9600, 0}});
  v1::KernelSpec& spec = *lease.mutable_spec();
  spec.mutable_launch()->clear_grid();
  spec.mutable_launch()->add_grid("1024 / 32");
  spec.mutable_launch()->add_grid("N / 1024 / 8");
  spec.mutable_launch()->set_block(0, "min(256, device.max_threads_per_block)");
  v1::TensorMap* map = spec.add_tensor_maps();
  map->set_buffer("X");
  map->add_dims("1024");
  map->add_dims("N / 1024");
  map->add_box("32");
  map->add_box("BLOCK / 32");  // 300 rows for the second: over the 256 a box may have

  auto results = Supervise(lease);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[1].status(), v1::RESULT_STATUS_OK) << results[1].error();
  EXPECT_EQ(results[1].max_abs_error(), 0);
  EXPECT_EQ(results[2].status(), v1::RESULT_STATUS_RUNTIME_FAILED);
  EXPECT_NE(results[2].error().find("tensor_maps[0]: cuTensorMapEncodeTiled over buffer 0 with "
                                    "dims (1024,1024) and box (32,300)"),
            std::string::npos)
      << results[2].error();
}

// A GPU runner's host memory is limited (RLIMIT_DATA) without limiting the
// address space that the driver reserves: a problem over the limit fails
// with a clear error, and the runner goes on with the next lease.
TEST_F(CudaRunnerTest, GpuRunnerMemoryLimitFailsTheProblemNotTheRunner) {
  RunnerSandbox sandbox;
  sandbox.memory_mb = 512;
  RunnerSupervisor supervisor(TF_BINARY_DIR "/bin/tunefleet-runner", *gpu_, sandbox);
  // X and Y of 96 Mi floats: 384 MiB each on the host, 768 MiB together.
  auto big = Supervise(supervisor, MakeLease({{"good", 256, 0}}, int64_t{96} << 20));
  ASSERT_EQ(big.size(), 1u);
  EXPECT_EQ(big[1].status(), v1::RESULT_STATUS_RUNTIME_FAILED);
  EXPECT_NE(big[1].error().find("cannot allocate"), std::string::npos) << big[1].error();
  auto small = Supervise(supervisor, MakeLease({{"good", 256, 0}}));
  ASSERT_EQ(small.size(), 1u);
  EXPECT_EQ(small[1].status(), v1::RESULT_STATUS_OK) << small[1].error();
}

// The GPU's comparison must give what runner::Compare gives on the host:
// counts, the first mismatch and its values, the largest error, NaN rules.
TEST_F(CudaRunnerTest, OutputsAreComparedOnTheGpuByTheHostRuleForEveryDtype) {
  auto backend = nvidia::MakeNvidiaBackend(gpu_->info, gpu_->ordinal);
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  ASSERT_TRUE((*backend)->Load({ArtifactPath()}).ok());
  auto copy = (*backend)->Find(0, "copy_second_to_first");
  ASSERT_TRUE(copy.ok());
  copy->grid = {64, 1, 1};
  copy->block = {256, 1, 1};
  constexpr int64_t kCount = 100003;  // not a multiple of a block
  for (const char* dtype : {"f32", "f64", "f16", "bf16", "i8", "i32", "i64", "u8", "u32"}) {
    SCOPED_TRACE(dtype);
    v1::Buffer random;
    random.set_dtype(dtype);
    auto reference = runner::HostBuffer::Allocate(dtype, kCount);
    auto output = runner::HostBuffer::Allocate(dtype, kCount);
    auto other = runner::HostBuffer::Allocate(dtype, kCount);
    auto poison = runner::HostBuffer::Allocate(dtype, kCount);
    ASSERT_TRUE(reference.ok() && output.ok() && other.ok() && poison.ok());
    ASSERT_TRUE(reference->Fill(random, 1).ok() && other->Fill(random, 2).ok());
    poison->Poison();
    const size_t size = reference->bytes() / kCount;
    // NaN (or 0xA5 bytes) in both at 11: equal. Elsewhere the output differs
    // at every 97th element from 500 on, and is poisoned from 90000 on.
    std::memcpy(static_cast<char*>(reference->data()) + 11 * size,
                static_cast<char*>(poison->data()) + 11 * size, size);
    output->CopyFrom(*reference);
    for (int64_t i = 500; i < kCount; i += 97) {
      const runner::HostBuffer& source = i >= 90000 ? *poison : *other;
      std::memcpy(static_cast<char*>(output->data()) + i * size,
                  static_cast<const char*>(source.data()) + i * size, size);
    }
    for (double rtol : {0.0, 0.05}) {
      const double atol = rtol / 10;
      const runner::Comparison want = Compare(*output, *reference, rtol, atol);
      ASSERT_GT(want.mismatches, 0);

      std::vector<runner::HostBuffer> initial;
      for (const runner::HostBuffer* source : {&*reference, &*output}) {
        initial.push_back(runner::HostBuffer::AllocateLike(*source).value());
        initial.back().CopyFrom(*source);
      }
      auto buffers = (*backend)->Upload(std::move(initial));
      ASSERT_TRUE(buffers.ok()) << buffers.status().ToString();
      ASSERT_TRUE((*backend)->Reset(**buffers, {}).ok());
      ASSERT_TRUE((*backend)->KeepReference(**buffers, {0}).ok());
      EXPECT_EQ((*backend)->Compare(**buffers, 0, rtol, atol)->mismatches, 0);
      ASSERT_TRUE(
          (*backend)->Run(*copy, **buffers, {static_cast<int64_t>(reference->bytes())}).ok());

      auto got = (*backend)->Compare(**buffers, 0, rtol, atol);
      ASSERT_TRUE(got.ok()) << got.status().ToString();
      EXPECT_EQ(got->count, kCount);
      EXPECT_EQ(got->mismatches, want.mismatches) << "rtol " << rtol;
      EXPECT_EQ(got->first_mismatch, want.first_mismatch);
      EXPECT_EQ(std::isnan(got->got), std::isnan(want.got));
      if (!std::isnan(want.got)) {
        EXPECT_EQ(got->got, want.got);
      }
      EXPECT_EQ(got->expected, want.expected);
      EXPECT_EQ(got->max_abs_error, want.max_abs_error);
      EXPECT_FALSE((*backend)->Compare(**buffers, 1, rtol, atol).ok())
          << "buffer 1 has no kept reference";
    }
  }
}

}  // namespace
}  // namespace tf::worker
