// Define-style kernels (param_style: define) through the HIP toolchain: the
// Kernel Tuner convolution as a HIP kernel, many configurations of its
// macro-configured source per clang run, for a CDNA and an RDNA target.
#include <gtest/gtest.h>

#include "common/files.h"
#include "common/subprocess.h"
#include "compiler/batch_builder.h"
#include "kernelspec/config.h"
#include "tests/imported_convolution.h"
#include "tests/test_util.h"
#include "vendors/amd/hip_toolchain.h"

namespace tf::amd {
namespace {

namespace v1 = ::tunefleet::v1;

bool UsesConstantMemory(const v1::Config& config) {
  for (const v1::ParamSetting& setting : config.settings()) {
    if (setting.name() == "use_cmem") return kernelspec::ValueText(setting.value()) == "1";
  }
  return false;
}

// The code object's symbol table, one symbol a line.
Result<std::string> ReadSymbols(const std::string& code_object) {
  TF_ASSIGN_OR_RETURN(ProcessResult read,
                      RunProcess({"llvm-readelf-19", "--symbols", "--wide", code_object},
                                 tf::testing::WithTimeout(60)));
  if (!read.success()) return Status::Internal("llvm-readelf-19: " + read.output);
  return read.output;
}

// A seeded spread of the imported space in batches of 6, for gfx90a (wave64)
// and gfx1100 (wave32): each configuration gets its own copy's kernel, the
// reference is the first copy's, and the batches group; a configuration
// whose tile exceeds the LDS fails alone, with clang's message; a copy that
// reads the filter from constant memory has its own __constant__ table, named
// as the device side looks it up (kernelspec::ConstantSymbol).
TEST(HipDefineStyleTest, ImportedConvolutionBuildsInGroupedBatches) {
  auto spec = tf::testing::ImportedConvolution("HIP");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  ASSERT_EQ(spec->spec.language(), "hip");
  ASSERT_EQ(spec->spec.param_style(), "define");
  auto configs = tf::testing::ConvolutionSpread(*spec);
  ASSERT_TRUE(configs.ok()) << configs.status().ToString();
  ASSERT_EQ(configs->size(), 12u);

  tf::testing::TempDir temp;
  auto store = compiler::ArtifactStore::Open(temp / "store");
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  compiler::BuildOptions options;
  options.work_root = temp / "work";
  options.parallelism = 2;
  options.batch_size = 6;
  options.timeout_s = 600;  // a batch takes seconds on an idle core; CI's may be far slower
  for (const std::string arch : {"gfx90a", "gfx1100"}) {
    SCOPED_TRACE(arch);
    auto toolchain = HipToolchain::Detect(arch);
    ASSERT_TRUE(toolchain.ok()) << toolchain.status().ToString();
    ASSERT_TRUE((*toolchain)->Validate(spec->spec).ok());
    std::vector<compiler::ConfigBuild> builds;
    compiler::BatchBuilder builder(**toolchain, **store, options);
    auto stats = builder.Build(spec->spec, spec->sources, *configs,
                               [&](std::vector<compiler::ConfigBuild> batch) {
                                 for (auto& build : batch) builds.push_back(std::move(build));
                               });
    ASSERT_TRUE(stats.ok()) << stats.status().ToString();
    EXPECT_EQ(stats->batches, 2);
    EXPECT_TRUE(stats->note.empty()) << stats->note;
    int with_constants = 0;
    tf::testing::ExpectGroupedConvolutionCopies(
        builds, configs->size(), "local memory", [&](const compiler::ConfigBuild& build) {
          EXPECT_EQ(build.resources.wave_size(), arch == "gfx90a" ? 64 : 32);
          // The copy's __constant__ table, which the device side fills, is in
          // the code object under the name it looks up (when the kernel reads it).
          if (!UsesConstantMemory(build.config)) return;
          auto table = ReadSymbols((*store)->PathOf(build.artifact_sha256));
          ASSERT_TRUE(table.ok()) << table.status().ToString();
          const std::string constant = kernelspec::ConstantSymbol(build.symbol, "d_filter");
          EXPECT_NE(table->find(" " + constant + "\n"), std::string::npos) << constant;
          ++with_constants;
        });
    EXPECT_GT(with_constants, 0);
  }
}

}  // namespace
}  // namespace tf::amd
