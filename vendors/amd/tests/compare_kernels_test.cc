// The output-compare kernels the AMD backend loads, built into it at build
// time: a code object for every gfx target TuneFleet compiles for, each with
// a kernel for every buffer dtype, read back with llvm-readelf as the
// toolchain reads a job's. No GPU needed; what runs them is amd_backend.cc,
// never yet run on an AMD GPU.
#include "vendors/amd/compare_kernels.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string_view>

#include "common/files.h"
#include "common/subprocess.h"
#include "runner/host_buffers.h"
#include "vendors/amd/code_object.h"
#include "vendors/amd/gfx_targets.h"

namespace tf::amd {
namespace {

#ifdef TF_HAVE_HIP_COMPARE_KERNELS

TEST(CompareKernelsTest, EveryTargetHasAKernelPerDtypeWithoutSpillsOrLds) {
  auto dir = MakeTempDir("compare_kernels_test-");
  ASSERT_TRUE(dir.ok());
  ASSERT_EQ(CompareCodeObjects().size(), GfxTargets().size());
  for (size_t t = 0; t < GfxTargets().size(); ++t) {
    const GfxTarget& gfx = GfxTargets()[t];
    const CompareCodeObject& code = CompareCodeObjects()[t];
    SCOPED_TRACE(gfx.name);
    EXPECT_EQ(std::string_view(code.arch), gfx.name);
    const std::string path = *dir + "/" + gfx.name + ".co";
    ASSERT_TRUE(
        WriteFileAtomic(path, std::string_view(reinterpret_cast<const char*>(code.data), code.size))
            .ok());
    auto read = RunProcess({"llvm-readelf-19", "--notes", "--wide", path}, {});
    ASSERT_TRUE(read.ok() && read->success()) << (read.ok() ? read->output : "");
    EXPECT_NE(read->output.find("amdhsa.target:   amdgcn-amd-amdhsa--" + std::string(gfx.name)),
              std::string::npos);
    auto report = ParseReadelfReport(read->output);
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    for (int d = 0; d <= static_cast<int>(runner::Dtype::kU32); ++d) {
      const std::string kernel =
          "tf_compare_" + std::string(runner::DtypeName(static_cast<runner::Dtype>(d)));
      ASSERT_TRUE(report->kernels.contains(kernel)) << kernel;
      const auto& usage = report->kernels.at(kernel);
      EXPECT_EQ(usage.wave_size(), gfx.wave_size) << kernel;
      EXPECT_EQ(usage.spill_store_bytes(), 0) << kernel;
      EXPECT_EQ(usage.shared_bytes(), 0) << kernel;
      EXPECT_GE(usage.max_threads_per_block(), 256) << kernel << ": the backend launches 256";
    }
  }
  std::filesystem::remove_all(*dir);
}

#else

TEST(CompareKernelsTest, EveryTargetHasAKernelPerDtypeWithoutSpillsOrLds) {
  GTEST_SKIP() << "built without HIP headers or clang++-19: no AMD device side";
}

#endif

}  // namespace
}  // namespace tf::amd
