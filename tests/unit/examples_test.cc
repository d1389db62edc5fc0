// The shipped CPU examples: they load and validate, the GEMM space has the
// intended size, and built by the real compiler and run by the real runner
// they do what their comments promise.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>

#include "compiler/batch_builder.h"
#include "kernelspec/config.h"
#include "kernelspec/space.h"
#include "kernelspec/spec_loader.h"
#include "kernelspec/validate.h"
#include "tests/test_util.h"
#include "vendors/toolchains.h"
#include "worker/devices.h"
#include "worker/runner_supervisor.h"

namespace tf::worker {
namespace {

const std::string kExamples = TF_SOURCE_DIR "/examples/cpu";

Device HostDevice() {
  auto devices = DiscoverDevices("cpu:1", "");
  EXPECT_TRUE(devices.ok()) << devices.status().ToString();
  return devices->front();
}

kernelspec::LoadedSpec Load(const std::string& path) {
  auto loaded = kernelspec::LoadSpecFile(path);
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_TRUE(kernelspec::ValidateSpec(loaded->spec, loaded->sources, {}).ok());
  return *loaded;
}

std::vector<v1::Config> Configs(const kernelspec::LoadedSpec& loaded, const Device& device) {
  kernelspec::DeviceProperties props(device.info.properties().begin(),
                                     device.info.properties().end());
  auto space = kernelspec::SearchSpace::Create(loaded.spec, loaded.spec.problems(0), props);
  EXPECT_TRUE(space.ok()) << space.status().ToString();
  auto configs = space->Select(loaded.spec.search(), 100000);
  EXPECT_TRUE(configs.ok()) << configs.status().ToString();
  return *configs;
}

// Builds the configurations with the real host toolchain and runs them all,
// on the first problem, in one lease through the real runner process.
std::map<std::string, v1::CandidateResult> BuildAndRun(const kernelspec::LoadedSpec& loaded,
                                                       const std::vector<v1::Config>& configs,
                                                       const Device& device) {
  const std::string dir =
      std::filesystem::temp_directory_path() / ("examples_test_" + std::to_string(getpid()));
  auto toolchain = vendors::MakeToolchain(loaded.spec);
  EXPECT_TRUE(toolchain.ok()) << toolchain.status().ToString();
  auto store = compiler::ArtifactStore::Open(dir + "/store");
  EXPECT_TRUE(store.ok());
  compiler::BuildOptions options;
  options.batch_size = static_cast<int>(configs.size());
  options.parallelism = 1;  // one batch, one artifact: the lease below holds it
  options.work_root = dir;
  std::vector<compiler::ConfigBuild> built;
  auto stats = compiler::BatchBuilder(**toolchain, **store, options)
                   .Build(loaded.spec, loaded.sources, configs, [&](auto batch) {
                     built.insert(built.end(), batch.begin(), batch.end());
                   });
  EXPECT_TRUE(stats.ok()) << stats.status().ToString();

  v1::Lease lease;
  lease.set_lease_id(1);
  *lease.mutable_spec() = loaded.spec;
  lease.set_reference_symbol(kernelspec::kReferenceSymbol);
  std::map<int64_t, std::string> key_of_id;
  for (const auto& build : built) {
    EXPECT_TRUE(build.ok) << build.diagnostics;
    lease.set_artifact_sha256(build.artifact_sha256);  // one batch: one artifact
    v1::LeasedCandidate* candidate = lease.add_candidates();
    candidate->set_candidate_id(lease.candidates_size());
    *candidate->mutable_config() = build.config;
    *candidate->mutable_problem() = loaded.spec.problems(0);
    candidate->set_symbol(build.symbol);
    key_of_id[candidate->candidate_id()] = kernelspec::ConfigKey(build.config);
  }
  RunnerSupervisor supervisor(TF_BINARY_DIR "/bin/tunefleet-runner", device);
  std::map<std::string, v1::CandidateResult> results;
  for (auto& [id, result] :
       tf::testing::RunLease(supervisor, lease, (*store)->PathOf(lease.artifact_sha256()))) {
    results[key_of_id[id]] = std::move(result);
  }
  std::filesystem::remove_all(dir);
  return results;
}

TEST(ExamplesTest, GemmSpaceHasAFewHundredCandidates) {
  kernelspec::LoadedSpec gemm = Load(kExamples + "/gemm/gemm.yaml");
  const size_t count = Configs(gemm, HostDevice()).size();
  EXPECT_GE(count, 100u);
  EXPECT_LE(count, 400u);
}

TEST(ExamplesTest, GemmCandidatesAreCorrectAndTimed) {
  kernelspec::LoadedSpec gemm = Load(kExamples + "/gemm/gemm.yaml");
  const Device device = HostDevice();
  std::vector<v1::Config> all = Configs(gemm, device);
  std::vector<v1::Config> sample = {all.front(), all[all.size() / 2], all.back()};
  auto results = BuildAndRun(gemm, sample, device);
  ASSERT_EQ(results.size(), 3u);
  for (const auto& [config, result] : results) {
    EXPECT_EQ(result.status(), v1::RESULT_STATUS_OK) << config << ": " << result.error();
    EXPECT_GT(result.timing().gflops(), 0) << config;
    EXPECT_GE(result.timing().repeats(), 3) << config;
  }
}

TEST(ExamplesTest, FaultyKernelFaultsAreContainedAndNamed) {
  kernelspec::LoadedSpec faulty = Load(kExamples + "/faulty/faulty.yaml");
  const Device device = HostDevice();
  auto results = BuildAndRun(faulty, Configs(faulty, device), device);
  ASSERT_EQ(results.size(), 6u);
  for (const char* ok : {"MODE=0", "MODE=4", "MODE=5"}) {
    EXPECT_EQ(results[ok].status(), v1::RESULT_STATUS_OK) << ok << ": " << results[ok].error();
  }
  EXPECT_EQ(results["MODE=1"].status(), v1::RESULT_STATUS_RUNTIME_FAILED);
  EXPECT_NE(results["MODE=1"].error().find("SIGSEGV"), std::string::npos);
  EXPECT_EQ(results["MODE=2"].status(), v1::RESULT_STATUS_TIMEOUT);
  EXPECT_EQ(results["MODE=3"].status(), v1::RESULT_STATUS_WRONG_RESULT);
  EXPECT_NE(results["MODE=3"].error().find("first at index 2048"), std::string::npos)
      << results["MODE=3"].error();
}

}  // namespace
}  // namespace tf::worker
