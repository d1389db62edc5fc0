// Kernel Tuner's convolution imported from its T1 file
// (tests/data/spaces/convolution/), and what a define-style batch build of
// it must give on any GPU toolchain: the vendors' define-style tests share it.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "client/kerneltuner_import.h"
#include "common/files.h"
#include "compiler/batch_builder.h"
#include "kernelspec/config.h"
#include "kernelspec/space.h"
#include "kernelspec/spec_loader.h"
#include "tests/test_util.h"
#include "vendors/toolchains.h"

namespace tf::testing {

inline const std::string kConvolutionDir = "tests/data/spaces/convolution/";

// The spec as imported, its language `language` in place of the T1 file's
// CUDA ("HIP": the kernel is plain HIP as well).
inline Result<kernelspec::LoadedSpec> ImportedConvolution(const std::string& language = "CUDA") {
  TF_ASSIGN_OR_RETURN(std::string t1,
                      ReadFile(SourcePath(kConvolutionDir + "convolution_milo_T1.json")));
  const std::string recorded = "\"Language\": \"CUDA\"";
  const size_t at = t1.find(recorded);
  if (at == std::string::npos) return Status::Internal("the T1 file names no CUDA language");
  t1.replace(at, recorded.size(), "\"Language\": \"" + language + "\"");
  TF_ASSIGN_OR_RETURN(
      client::ImportedSpec imported,
      client::ImportKernelTunerT1(t1, "convolution_milo_T1.json", "convolution_milo.cu",
                                  vendors::Languages(), "convolution_naive"));
  return kernelspec::LoadSpec(imported.yaml, "convolution.yaml", SourcePath(kConvolutionDir));
}

// A seeded spread of 12 configurations of its first problem: half of them
// declare more memory than a block may have.
inline Result<std::vector<::tunefleet::v1::Config>> ConvolutionSpread(
    const kernelspec::LoadedSpec& spec) {
  TF_ASSIGN_OR_RETURN(auto space,
                      kernelspec::SearchSpace::Create(spec.spec, spec.spec.problems(0), {}));
  ::tunefleet::v1::Search spread;
  spread.set_strategy("random");
  spread.set_max_candidates(12);
  spread.set_seed(16);
  return space.Select(spread, 1'000'000);
}

// The builds of ConvolutionSpread's `configs` in batches of 6: each built
// configuration has its own copy (namespace and renamed kernel; the
// reference is the first copy's), a failure is the kernel's memory limit
// (`limit_words` in the compiler's message), most build, and they share few
// artifacts. `each_built` adds a toolchain's own checks.
inline void ExpectGroupedConvolutionCopies(
    const std::vector<compiler::ConfigBuild>& builds, size_t configs,
    const std::string& limit_words,
    const std::function<void(const compiler::ConfigBuild&)>& each_built) {
  ASSERT_EQ(builds.size(), configs);
  std::set<std::string> symbols;
  std::map<std::string, int> per_artifact;
  for (const compiler::ConfigBuild& build : builds) {
    if (!build.ok) {
      EXPECT_NE(build.diagnostics.find(limit_words), std::string::npos) << build.diagnostics;
      continue;
    }
    EXPECT_NE(build.symbol.find("convolution_kernel_tf_copy"), std::string::npos) << build.symbol;
    EXPECT_GE(kernelspec::CopyIndexInSymbol(build.symbol), 0) << build.symbol;
    EXPECT_NE(build.reference_symbol.find("convolution_naive_tf_copy0"), std::string::npos)
        << build.reference_symbol;
    each_built(build);
    symbols.insert(build.symbol);
    ++per_artifact[build.artifact_sha256];
  }
  EXPECT_GE(symbols.size(), configs / 2);
  EXPECT_LT(per_artifact.size(), symbols.size());
}

}  // namespace tf::testing
