// Replay devices on the recorded convolution spaces: the toolchain's
// artifacts, discovery, and the backend's answers (recorded times, recorded
// failures, configurations outside the recording); and that the replay spec
// beside the recordings describes exactly the recorded space.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <limits>
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
  // The factor travels in thousandths: one it would round to 0 or overflow is refused.
  for (double speed : {-1.0, 0.0001, 1e300, std::numeric_limits<double>::infinity(),
                       std::numeric_limits<double>::quiet_NaN()}) {
    EXPECT_THAT(DiscoverReplayDevice(SpaceFile("A100_T4.json.gz"), 0, "", speed).status().message(),
                HasSubstr("--replay-speed must be 0 (no sleeping) or from 0.001 to 1e+06, got "))
        << speed;
  }
}

TEST(ReplayBackendTest, AnswersRecordedTimesAndFailuresAndRefusesTheUnrecorded) {
  auto recording = search::ReadRecordedSpace(SpaceFile("A100_kerneltuner_cache.json.gz"));
  ASSERT_TRUE(recording.ok()) << recording.status().ToString();
  const search::Space space = recording->space;
  const std::vector<search::RecordedResult> results = recording->results;
  ReplayBackend backend({*std::move(recording)}, "A100 as discovered", /*speed=*/0);
  ASSERT_TRUE(backend.Load({"unused"}).ok());

  std::optional<search::ConfigId> ok, failed;
  for (search::ConfigId id = 0; id < space.size(); ++id) {
    if (results[id].outcome == search::Outcome::kOk && !ok) ok = id;
    if (results[id].outcome == search::Outcome::kRuntimeFailed && !failed) failed = id;
  }
  ASSERT_TRUE(ok && failed);

  auto kernel = backend.Find(0, kernelspec::ConfigKey(ConfigOf(space, *ok)));
  ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
  auto answer = backend.Answer(*kernel, 0);
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->status(), v1::RESULT_STATUS_OK);
  EXPECT_DOUBLE_EQ(answer->timing().median_ns(), results[*ok].time_ms * 1e6);

  auto failing = backend.Find(0, kernelspec::ConfigKey(ConfigOf(space, *failed)));
  ASSERT_TRUE(failing.ok());
  answer = backend.Answer(*failing, 0);
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->status(), v1::RESULT_STATUS_RUNTIME_FAILED);
  EXPECT_THAT(answer->error(), HasSubstr("recorded on A100 as discovered (kerneltuner-cache)"));
  EXPECT_THAT(answer->error(), HasSubstr("(kerneltuner-cache): runtime_failed"));

  v1::Config outside = ConfigOf(space, *ok);
  outside.mutable_settings(0)->mutable_value()->set_int_value(17);
  auto unrecorded = backend.Find(0, kernelspec::ConfigKey(outside));
  ASSERT_FALSE(unrecorded.ok());
  EXPECT_THAT(unrecorded.status().message(), HasSubstr("is outside the space recorded on "));
  EXPECT_THAT(unrecorded.status().message(),
              HasSubstr("(kerneltuner-cache): block_size_x=17 was never recorded"));
}

// Kernel Tuner's conversion of a GFLOP/s-tuned cache to T4 records the objective alone: the device
// reads it as the evaluator does, the highest rate the fastest.
TEST(ReplayBackendTest, AnswersARecordingOfARateObjective) {
  testing::TempDir dir;
  auto result = [](int x, const std::string& invalidity, const std::string& value) {
    return R"({"configuration": {"x": )" + std::to_string(x) + R"(}, "invalidity": ")" +
           invalidity + R"(", "objectives": ["GFLOP/s"], "measurements": [{"name": "GFLOP/s",)" +
           R"( "value": )" + value + R"(, "unit": ""}]})";
  };
  const std::string path = dir / "gflops_T4.json";
  ASSERT_TRUE(WriteFileAtomic(path, R"({"results": [)" + result(1, "correct", R"("500")") + "," +
                                        result(2, "runtime", R"("RuntimeFailedConfig")") + "]}")
                  .ok());
  ASSERT_TRUE(DiscoverReplayDevice(path, 0, "", 0).ok());
  auto recording = search::ReadRecordedSpace(path);
  ASSERT_TRUE(recording.ok()) << recording.status().ToString();
  ReplayBackend backend({*std::move(recording)}, "X", /*speed=*/0);
  auto fast = backend.Find(0, "x=1");
  ASSERT_TRUE(fast.ok()) << fast.status().ToString();
  auto answer = backend.Answer(*fast, 0);
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->status(), v1::RESULT_STATUS_OK);
  EXPECT_DOUBLE_EQ(answer->timing().median_ns(), 1e6 / 500);
  auto failed = backend.Find(0, "x=2");
  ASSERT_TRUE(failed.ok());
  EXPECT_EQ(backend.Answer(*failed, 0)->status(), v1::RESULT_STATUS_RUNTIME_FAILED);
}

// A small Kernel Tuner cache of one parameter, x = 1 and 2, recorded on `device` for `problem`
// (none when empty), with times `t1` and `t2`.
std::string SmallCache(const std::string& device, const std::string& problem, double t1,
                       double t2) {
  return R"({"device_name": ")" + device + R"(", "kernel_name": "k", )" +
         (problem.empty() ? "" : R"("problem": ")" + problem + R"(", )") +
         R"("tune_params_keys": ["x"], "tune_params": {"x": [1, 2]}, "cache": {)" +
         R"("1": {"x": 1, "time": )" + std::to_string(t1) + R"(}, "2": {"x": 2, "time": )" +
         std::to_string(t2) + "}}}";
}

v1::Problem ProblemOf(int64_t n) {
  v1::Problem problem;
  v1::ProblemVar* var = problem.add_vars();
  var->set_name("N");
  var->set_value(n);
  return problem;
}

TEST(ReplayDevicesTest, AFolderIsOneDeviceWithARecordingPerProblem) {
  testing::TempDir dir;
  ASSERT_TRUE(WriteFileAtomic(dir / "b.json", SmallCache("GPU", "N=2", 4, 3)).ok());
  ASSERT_TRUE(WriteFileAtomic(dir / "a.json", SmallCache("GPU", "N=1", 2, 1)).ok());
  ASSERT_TRUE(WriteFileAtomic(dir / "notes.md", "not a recording").ok());
  auto device = DiscoverReplayDevice(dir.path() + "/", 0, "", 0);
  ASSERT_TRUE(device.ok()) << device.status().ToString();
  EXPECT_EQ(device->info.model(), "GPU");
  ASSERT_EQ(device->files.size(), 2u);
  EXPECT_EQ(std::filesystem::path(device->files[0]).filename(), "a.json");
  EXPECT_EQ(std::filesystem::path(device->files[1]).filename(), "b.json");

  // Refused at start, naming the file: a recording that names no problem, a problem recorded
  // twice, recordings of two devices, a folder with none.
  auto refusal = [](const std::string& folder) {
    auto refused = DiscoverReplayDevice(folder, 0, "", 0);
    EXPECT_FALSE(refused.ok());
    return refused.status().message();
  };
  testing::TempDir unnamed, twice, two_devices, empty;
  ASSERT_TRUE(WriteFileAtomic(unnamed / "a.json", SmallCache("GPU", "N=1", 2, 1)).ok());
  ASSERT_TRUE(WriteFileAtomic(unnamed / "b.json", SmallCache("GPU", "", 2, 1)).ok());
  EXPECT_THAT(refusal(unnamed.path()), HasSubstr("b.json names no problem"));
  ASSERT_TRUE(WriteFileAtomic(twice / "a.json", SmallCache("GPU", "N=1", 2, 1)).ok());
  ASSERT_TRUE(WriteFileAtomic(twice / "b.json.gz", SmallCache("GPU", "N=1", 2, 1)).ok());
  EXPECT_THAT(refusal(twice.path()), HasSubstr("b.json.gz records N=1 again"));
  ASSERT_TRUE(WriteFileAtomic(two_devices / "a.json", SmallCache("GPU", "N=1", 2, 1)).ok());
  ASSERT_TRUE(WriteFileAtomic(two_devices / "b.json", SmallCache("CPU", "N=2", 2, 1)).ok());
  EXPECT_THAT(refusal(two_devices.path()), HasSubstr("one device per folder"));
  EXPECT_THAT(refusal(empty.path()), HasSubstr("no *.json or *.json.gz recordings"));
}

TEST(ReplayBackendTest, AnswersEachProblemFromItsRecording) {
  testing::TempDir dir;
  std::vector<search::RecordedSpace> recordings;
  for (const auto& [name, text] : {std::pair{"a.json", SmallCache("GPU", "N=1", 2, 1)},
                                   {"b.json", SmallCache("GPU", "N=2", 4, 3)}}) {
    ASSERT_TRUE(WriteFileAtomic(dir / name, text).ok());
    auto recording = search::ReadRecordedSpace(dir / name);
    ASSERT_TRUE(recording.ok()) << recording.status().ToString();
    recordings.push_back(*std::move(recording));
  }
  ReplayBackend backend(std::move(recordings), "H100", /*speed=*/0);
  auto time_of_x2 = [&](int64_t n) -> Result<double> {
    TF_RETURN_IF_ERROR(backend.SelectProblem(ProblemOf(n)));
    TF_ASSIGN_OR_RETURN(runner::Launchable kernel, backend.Find(0, "x=2"));
    return backend.Answer(kernel, 0)->timing().median_ns() / 1e6;
  };
  for (const auto& [n, expected] : {std::pair{2, 3.0}, {1, 1.0}}) {
    auto time = time_of_x2(n);
    ASSERT_TRUE(time.ok()) << time.status().ToString();
    EXPECT_EQ(*time, expected) << "N=" << n;
  }
  EXPECT_THAT(time_of_x2(3).status().message(),
              HasSubstr("no recording of N=3 on this replay device (recorded: N=1; N=2)"));

  // One recording: it answers its own problem only, or every problem when it names none.
  auto named = search::ReadRecordedSpace(dir / "a.json");
  ASSERT_TRUE(named.ok());
  ReplayBackend one({*named}, "X", 0);
  EXPECT_TRUE(one.SelectProblem(ProblemOf(1)).ok());
  EXPECT_FALSE(one.SelectProblem(ProblemOf(2)).ok());
  named->problem.clear();
  ReplayBackend any({*std::move(named)}, "X", 0);
  EXPECT_TRUE(any.SelectProblem(ProblemOf(2)).ok());
}

// `tunefleet results --format t4` of a job writes each result's problem, its variables in the
// order of the spec's (here N before M, a job's queries M first): the file is one device that
// answers each of its problems from their own results.
TEST(ReplayDevicesTest, AJobsExportAnswersEachOfItsProblems) {
  // A correct result of configuration x of `problem` (a JSON object).
  auto result = [](int x, const std::string& problem, double ms) {
    return R"({"configuration": {"x": )" + std::to_string(x) + R"(}, "problem": )" + problem +
           R"(, "invalidity": "correct", "objectives": ["time"], "times": {}, )" +
           R"("measurements": [{"name": "time", "value": )" + std::to_string(ms) +
           R"(, "unit": "ms"}]})";
  };
  const std::string n1 = R"({"N": 1, "M": 8})", n2 = R"({"N": 2, "M": 8})";
  testing::TempDir dir;
  const std::string path = dir / "job7_T4.json";
  ASSERT_TRUE(WriteFileAtomic(path, R"({"schema_version": "1.0.0", "results": [)" +
                                        result(1, n1, 1.0) + "," + result(2, n1, 2.0) + "," +
                                        result(2, n2, 5.0) + "]}")
                  .ok());
  auto device = DiscoverReplayDevice(path, 0, "", 0);
  ASSERT_TRUE(device.ok()) << device.status().ToString();
  EXPECT_EQ(device->files.size(), 1u);
  auto recordings = search::ReadRecordedSpaces(path);
  ASSERT_TRUE(recordings.ok()) << recordings.status().ToString();
  ReplayBackend backend(*std::move(recordings), "H100", /*speed=*/0);
  auto time_of_x2 = [&](int64_t n) -> Result<double> {
    TF_ASSIGN_OR_RETURN(v1::Problem problem,
                        kernelspec::ParseProblem("M=8,N=" + std::to_string(n)));
    TF_RETURN_IF_ERROR(backend.SelectProblem(problem));
    TF_ASSIGN_OR_RETURN(runner::Launchable kernel, backend.Find(0, "x=2"));
    return backend.Answer(kernel, 0)->timing().median_ns() / 1e6;
  };
  for (const auto& [n, expected] : {std::pair{2, 5.0}, {1, 2.0}}) {
    auto time = time_of_x2(n);
    ASSERT_TRUE(time.ok()) << time.status().ToString();
    EXPECT_EQ(*time, expected) << "N=" << n;
  }
  EXPECT_THAT(
      time_of_x2(3).status().message(),
      HasSubstr("no recording of M=8,N=3 on this replay device (recorded: N=1,M=8; N=2,M=8)"));

  // A problem written twice, its variables in two orders, is refused as recorded twice.
  ASSERT_TRUE(WriteFileAtomic(path, R"({"results": [)" + result(1, n1, 1.0) + "," +
                                        result(2, R"({"M": 8, "N": 1})", 2.0) + "]}")
                  .ok());
  auto twice = DiscoverReplayDevice(path, 0, "", 0);
  ASSERT_FALSE(twice.ok());
  EXPECT_THAT(twice.status().message(), HasSubstr("records M=8,N=1 again"));
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
