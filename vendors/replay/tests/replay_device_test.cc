// Replay devices on the recorded convolution spaces: the toolchain's
// artifacts, discovery, and the backend's answers (recorded times, recorded
// failures, configurations outside the recording); and that the replay spec
// beside the recordings describes exactly the recorded space.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "common/files.h"
#include "kernelspec/config.h"
#include "kernelspec/space.h"
#include "kernelspec/validate.h"
#include "tests/test_util.h"
#include "vendors/replay/replay_backend.h"
#include "vendors/replay/replay_devices.h"
#include "vendors/replay/replay_toolchain.h"
#include "vendors/toolchains.h"

namespace tf::replay {
namespace {

using ::testing::HasSubstr;

std::string SpaceFile(const std::string& name) {
  return testing::SourcePath("tests/data/spaces/convolution/" + name);
}

v1::Config ConfigOf(const search::Space& space, search::ConfigId id) {
  auto config = kernelspec::ParseConfigKey(space.Describe(id));
  EXPECT_TRUE(config.ok());
  return *config;
}

TEST(ReplayToolchainTest, ArtifactListsTheBatchAndSymbolsAreConfigKeys) {
  kernelspec::LoadedSpec spec =
      testing::LoadTestSpec("tests/data/spaces/convolution/convolution_replay.yaml");
  auto toolchain = vendors::MakeToolchain(spec.spec, "replay");
  ASSERT_TRUE(toolchain.ok()) << toolchain.status().ToString();
  EXPECT_EQ((*toolchain)->target(), "replay");
  EXPECT_TRUE((*toolchain)->Validate(spec.spec).ok());
  auto a = kernelspec::ParseConfigKey("block_size_x=16,block_size_y=2");
  auto b = kernelspec::ParseConfigKey("block_size_x=32,block_size_y=1");
  ASSERT_TRUE(a.ok() && b.ok());
  testing::TempDir dir;
  auto listing = (*toolchain)->GenerateBatch(spec.spec, spec.sources, {*a, *b});
  ASSERT_TRUE(listing.ok());
  ASSERT_TRUE(WriteFileAtomic(dir / "batch.txt", *listing).ok());
  auto outcome =
      (*toolchain)->Compile(dir.path(), "batch.txt", "batch.out", spec.spec, {*a, *b}, 10);
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  ASSERT_TRUE(outcome->ok);
  ASSERT_EQ(outcome->kernels.size(), 2u);
  EXPECT_EQ(outcome->kernels[0].symbol, "block_size_x=16,block_size_y=2");
  EXPECT_EQ(outcome->kernels[1].symbol, "block_size_x=32,block_size_y=1");
  auto artifact = ReadFile(dir / "batch.out");
  ASSERT_TRUE(artifact.ok());
  EXPECT_EQ(*artifact, std::string(kArtifactHeader) +
                           "\nblock_size_x=16,block_size_y=2\nblock_size_x=32,block_size_y=1\n");

  spec.spec.add_compile_options("-O3");
  EXPECT_THAT((*toolchain)->Validate(spec.spec).message(),
              HasSubstr("compile_options: a replay kernel is not compiled"));
}

TEST(ReplayDevicesTest, DiscoveryDescribesTheRecordedDeviceAndRefusesBadFiles) {
  auto device = DiscoverReplayDevice(SpaceFile("A100_T4.json.gz"), 3, "lab", 0.5);
  ASSERT_TRUE(device.ok()) << device.status().ToString();
  EXPECT_EQ(device->info.index(), 3);
  EXPECT_EQ(device->info.vendor(), "replay");
  EXPECT_EQ(device->info.arch(), "replay");
  EXPECT_THAT(device->info.device_class(), HasSubstr("replay/"));
  EXPECT_THAT(device->info.device_class(), HasSubstr("/lab"));
  EXPECT_EQ(device->info.properties().at("replay_speed_permille"), 500);
  ASSERT_EQ(device->files.size(), 1u);
  EXPECT_TRUE(std::filesystem::path(device->files[0]).is_absolute());

  testing::TempDir dir;
  ASSERT_TRUE(WriteFileAtomic(dir / "bad.json", "{\"not\": \"a recording\"}").ok());
  auto bad = DiscoverReplayDevice(dir / "bad.json", 0, "", 1);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("replay:" + (dir / "bad.json")));
  EXPECT_FALSE(DiscoverReplayDevice(dir / "missing.json", 0, "", 1).ok());
  EXPECT_THAT(DiscoverReplayDevice(SpaceFile("A100_T4.json.gz"), 0, "", -1).status().message(),
              HasSubstr("--replay-speed must be >= 0"));
}

TEST(ReplayBackendTest, AnswersRecordedTimesAndFailuresAndRefusesTheUnrecorded) {
  auto recording = search::ReadRecordedSpace(SpaceFile("A100_kerneltuner_cache.json.gz"));
  ASSERT_TRUE(recording.ok()) << recording.status().ToString();
  const search::Space space = recording->space;
  const std::vector<search::RecordedResult> results = recording->results;
  ReplayBackend backend(*std::move(recording), /*speed=*/0);
  ASSERT_TRUE(backend.Load({"unused"}).ok());

  std::optional<search::ConfigId> ok, failed;
  for (search::ConfigId id = 0; id < space.size(); ++id) {
    if (results[id].outcome == search::Outcome::kOk && !ok) ok = id;
    if (results[id].outcome == search::Outcome::kRuntimeFailed && !failed) failed = id;
  }
  ASSERT_TRUE(ok && failed);

  auto kernel = backend.Find(0, kernelspec::ConfigKey(ConfigOf(space, *ok)));
  ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
  auto answer = backend.Answer(*kernel);
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->status(), v1::RESULT_STATUS_OK);
  EXPECT_DOUBLE_EQ(answer->timing().median_ns(), results[*ok].time_ms * 1e6);

  auto failing = backend.Find(0, kernelspec::ConfigKey(ConfigOf(space, *failed)));
  ASSERT_TRUE(failing.ok());
  answer = backend.Answer(*failing);
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->status(), v1::RESULT_STATUS_RUNTIME_FAILED);
  EXPECT_THAT(answer->error(), HasSubstr("recorded on "));
  EXPECT_THAT(answer->error(), HasSubstr("(kerneltuner-cache): runtime_failed"));

  v1::Config outside = ConfigOf(space, *ok);
  outside.mutable_settings(0)->mutable_value()->set_int_value(17);
  auto unrecorded = backend.Find(0, kernelspec::ConfigKey(outside));
  ASSERT_FALSE(unrecorded.ok());
  EXPECT_THAT(unrecorded.status().message(), HasSubstr("is outside the space recorded on "));
  EXPECT_THAT(unrecorded.status().message(),
              HasSubstr("(kerneltuner-cache): block_size_x=17 was never recorded"));
}

TEST(ReplaySpecTest, TheReplaySpecsSpaceIsTheRecordedSpace) {
  kernelspec::LoadedSpec spec =
      testing::LoadTestSpec("tests/data/spaces/convolution/convolution_replay.yaml");
  ASSERT_TRUE(kernelspec::ValidateSpec(spec.spec, spec.sources, {}).ok());
  auto space = kernelspec::SearchSpace::Create(spec.spec, spec.spec.problems(0), {});
  ASSERT_TRUE(space.ok()) << space.status().ToString();
  auto recording = search::ReadRecordedSpace(SpaceFile("A100_T4.json.gz"));
  ASSERT_TRUE(recording.ok());
  std::set<std::string> recorded;
  for (search::ConfigId id = 0; id < recording->space.size(); ++id) {
    recorded.insert(recording->space.Describe(id));
  }
  std::set<std::string> specified;
  space->Enumerate([&](const v1::Config& config) {
    specified.insert(kernelspec::ConfigKey(config));
    return true;
  });
  EXPECT_EQ(specified.size(), 4362u);
  EXPECT_EQ(specified, recorded);
}

}  // namespace
}  // namespace tf::replay
