#include "search/recorded_space.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "common/files.h"
#include "tests/test_util.h"

namespace tf::search {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const char* const kDevices[] = {"A100", "A4000", "A6000", "MI250X", "W6600", "W7800"};

std::string SpaceFile(const std::string& name) {
  return testing::SourcePath("tests/data/spaces/convolution/" + name);
}

std::map<Outcome, int> CountOutcomes(const RecordedSpace& recorded) {
  std::map<Outcome, int> counts;
  for (const RecordedResult& r : recorded.results) ++counts[r.outcome];
  return counts;
}

TEST(RecordedSpaceTest, ReadsEveryConvolutionT4File) {
  for (const char* device : kDevices) {
    auto recorded = ReadRecordedSpace(SpaceFile(std::string(device) + "_T4.json.gz"));
    ASSERT_TRUE(recorded.ok()) << recorded.status().ToString();
    EXPECT_EQ(recorded->format, "t4");
    EXPECT_EQ(recorded->space.size(), 4362u) << device;
    EXPECT_EQ(recorded->results.size(), 4362u) << device;
    EXPECT_EQ(recorded->space.num_params(), 10u) << device;
  }
}

TEST(RecordedSpaceTest, T4ParametersResultsAndTimes) {
  auto recorded = ReadRecordedSpace(SpaceFile("A100_T4.json.gz"));
  ASSERT_TRUE(recorded.ok()) << recorded.status().ToString();
  const auto& params = recorded->space.params();
  EXPECT_EQ(params[0].name, "block_size_x");
  EXPECT_EQ(params[9].name, "filter_width");
  ASSERT_EQ(params[0].values.size(), 16u);  // 16, 32, ..., 256: ascending
  EXPECT_EQ(std::get<int64_t>(params[0].values.front()), 16);
  EXPECT_EQ(std::get<int64_t>(params[0].values.back()), 256);
  EXPECT_TRUE(params[0].ordinal());
  EXPECT_EQ(params[1].values.size(), 5u);
  EXPECT_EQ(CountOutcomes(*recorded), (std::map<Outcome, int>{{Outcome::kOk, 4201},
                                                              {Outcome::kCompileFailed, 6},
                                                              {Outcome::kRuntimeFailed, 155}}));
  // The first recorded result: block_size_x=16, block_size_y=1, tiles 1, use_shmem=0.
  const RecordedResult& first = recorded->results[0];
  EXPECT_EQ(recorded->space.Describe(0),
            "block_size_x=16,block_size_y=1,tile_size_x=1,tile_size_y=1,read_only=0,"
            "use_padding=0,use_shmem=0,use_cmem=1,filter_height=15,filter_width=15");
  EXPECT_DOUBLE_EQ(first.time_ms, 3.8753279224038124);
  EXPECT_DOUBLE_EQ(first.compile_ms, 918.5990339610726);
  EXPECT_EQ(first.runtimes_ms.size(), 32u);
  EXPECT_GT(first.benchmark_ms, 32 * 3.8);
}

// The cache file and the T4 file are the same A100 run: every configuration
// has the same outcome and time in both.
TEST(RecordedSpaceTest, CacheFileAgreesWithT4File) {
  auto cache = ReadRecordedSpace(SpaceFile("A100_kerneltuner_cache.json.gz"));
  auto t4 = ReadRecordedSpace(SpaceFile("A100_T4.json.gz"));
  ASSERT_TRUE(cache.ok()) << cache.status().ToString();
  ASSERT_TRUE(t4.ok()) << t4.status().ToString();
  EXPECT_EQ(cache->format, "kerneltuner-cache");
  EXPECT_EQ(cache->device, "NVIDIA A100-PCIE-40GB");
  EXPECT_EQ(cache->kernel, "convolution_kernel");
  ASSERT_EQ(cache->space.size(), 4362u);
  EXPECT_EQ(CountOutcomes(*cache), CountOutcomes(*t4));
  // tune_params lists values no configuration has, so indices differ: match by value.
  const Space& a = cache->space;
  const Space& b = t4->space;
  ASSERT_EQ(a.num_params(), b.num_params());
  for (ConfigId id = 0; id < a.size(); ++id) {
    std::vector<uint32_t> in_b;
    for (size_t p = 0; p < a.num_params(); ++p) {
      const Value& v = a.params()[p].values[a.config(id)[p]];
      const auto& values = b.params()[p].values;
      in_b.push_back(std::find(values.begin(), values.end(), v) - values.begin());
    }
    std::optional<ConfigId> match = b.Find(in_b.data());
    ASSERT_TRUE(match) << a.Describe(id);
    EXPECT_EQ(cache->results[id].outcome, t4->results[*match].outcome) << a.Describe(id);
    if (cache->results[id].outcome == Outcome::kOk) {
      EXPECT_DOUBLE_EQ(cache->results[id].time_ms, t4->results[*match].time_ms);
    }
  }
}

class SmallFilesTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& text) {
    std::string path = dir_ / name;
    EXPECT_TRUE(WriteFileAtomic(path, text).ok());
    return path;
  }
  testing::TempDir dir_;
};

constexpr const char* kCacheHead =
    R"({"device_name": "X", "kernel_name": "k", "tune_params_keys": ["bx", "dt"],)"
    R"( "tune_params": {"bx": [32, 64, 128], "dt": ["half", "float"]}, "objective": "time",)"
    R"( "cache": {)";

TEST_F(SmallFilesTest, PlainCacheFileWithStringsAndFailures) {
  auto recorded = ReadRecordedSpace(
      Write("k_cache.json",
            std::string(kCacheHead) +
                R"("32,half": {"bx": 32, "dt": "half", "time": 2.5, "compile_time": 7},)"
                R"("64,float": {"bx": 64, "dt": "float", "time": "InvalidConfig"},)"
                R"("128,half": {"bx": 128, "dt": "half", "time": "CompilationFailedConfig"}}})"));
  ASSERT_TRUE(recorded.ok()) << recorded.status().ToString();
  EXPECT_EQ(recorded->space.size(), 3u);
  EXPECT_FALSE(recorded->space.params()[1].ordinal());
  EXPECT_EQ(recorded->results[0].time_ms, 2.5);
  EXPECT_EQ(recorded->results[0].compile_ms, 7);
  EXPECT_EQ(recorded->results[0].benchmark_ms, -1);
  EXPECT_EQ(recorded->results[1].outcome, Outcome::kInvalid);
  EXPECT_EQ(recorded->results[2].outcome, Outcome::kCompileFailed);
  EXPECT_EQ(recorded->space.Describe(1), "bx=64,dt=float");
}

// The entries keep the file's order wherever `cache` stands among the members; a key written
// twice keeps its first place and its last value, as a JSON object does.
TEST_F(SmallFilesTest, CacheEntriesInFileOrderWhereverTheCacheStands) {
  auto recorded = ReadRecordedSpace(Write(
      "k_cache.json", R"({"cache": {"64,half": {"bx": 64, "dt": "half", "time": 3},)"
                      R"( "32,half": {"bx": 32, "dt": "half", "time": 2, "cache": {"bx": 1}},)"
                      R"( "64,half": {"bx": 64, "dt": "half", "time": 1}},)"
                      R"( "tune_params_keys": ["bx", "dt"], "device_name": "X",)"
                      R"( "tune_params": {"bx": [32, 64], "dt": ["half"]}})"));
  ASSERT_TRUE(recorded.ok()) << recorded.status().ToString();
  EXPECT_EQ(recorded->device, "X");
  ASSERT_EQ(recorded->space.size(), 2u);
  EXPECT_EQ(recorded->space.Describe(0), "bx=64,dt=half");
  EXPECT_EQ(recorded->results[0].time_ms, 1);
  EXPECT_EQ(recorded->space.Describe(1), "bx=32,dt=half");
  EXPECT_EQ(recorded->results[1].time_ms, 2);
}

// Kernel Tuner writes the closing braces only when tuning ends.
TEST_F(SmallFilesTest, CacheFileCutShortIsReadAsFarAsItGoes) {
  auto recorded = ReadRecordedSpace(Write(
      "k_cache.json",
      std::string(kCacheHead) + "\n\"32,half\": {\"bx\": 32, \"dt\": \"half\", \"time\": 1.5},\n"));
  ASSERT_TRUE(recorded.ok()) << recorded.status().ToString();
  EXPECT_EQ(recorded->space.size(), 1u);
}

// As Python's json module writes them, and as Kernel Tuner wrote failures
// before it had failure strings: NaN and Infinity outside strings (not
// inside), the error value 1e20.
TEST_F(SmallFilesTest, CacheFileWithNonFiniteNumbersAndTheOldErrorValue) {
  auto recorded = ReadRecordedSpace(Write(
      "k_cache.json",
      std::string(kCacheHead) +
          R"("32,half": {"bx": 32, "dt": "half", "time": 2.5, "GFLOP/s": NaN, "note": "NaN,"},)"
          R"("64,float": {"bx": 64, "dt": "float", "time": 1e20, "times": [Infinity, -Infinity]},)"
          R"("64,half": {"bx": 64, "dt": "half", "time": NaN},)"
          R"("128,half": {"bx": 128, "dt": "half", "time": 0.5}}})"));
  ASSERT_TRUE(recorded.ok()) << recorded.status().ToString();
  ASSERT_EQ(recorded->space.size(), 4u);
  EXPECT_EQ(recorded->results[0].outcome, Outcome::kOk);
  EXPECT_EQ(recorded->results[0].time_ms, 2.5);
  EXPECT_EQ(recorded->results[1].outcome, Outcome::kInvalid);
  EXPECT_TRUE(recorded->results[1].runtimes_ms.empty());
  EXPECT_EQ(recorded->results[2].outcome, Outcome::kInvalid);
  EXPECT_EQ(recorded->results[3].time_ms, 0.5);
  EXPECT_EQ(
      ReadRecordedSpace(Write("bad.json", std::string(kCacheHead) + "NaNa}}")).status().code(),
      Code::kInvalidArgument);
}

TEST_F(SmallFilesTest, T4WithFloatsAndEveryInvalidity) {
  auto entry = [](const std::string& config, const std::string& invalidity,
                  const std::string& value) {
    return R"({"configuration": )" + config + R"(, "invalidity": ")" + invalidity +
           R"(", "correctness": 1, "times": {"compilation_time": 3, "runtimes": [1, 2]},)" +
           R"( "measurements": [{"name": "time", "value": )" + value +
           R"(, "unit": "ms"}], "objectives": ["time"]})";
  };
  auto recorded = ReadRecordedSpace(
      Write("k_T4.json", R"({"schema_version": "1.0.0", "results": [)" +
                             entry(R"({"f": 0.5, "s": true})", "correct", "4.5") + "," +
                             entry(R"({"f": 0.1, "s": false})", "timeout", R"("TimeoutConfig")") +
                             "," + entry(R"({"f": 1.5, "s": true})", "correctness", "9") + "]}"));
  ASSERT_TRUE(recorded.ok()) << recorded.status().ToString();
  const Parameter& f = recorded->space.params()[0];
  EXPECT_THAT(f.values, ElementsAre(Value(0.1), Value(0.5), Value(1.5)));
  EXPECT_THAT(recorded->space.params()[1].values, ElementsAre(Value("False"), Value("True")));
  EXPECT_EQ(recorded->results[0].time_ms, 4.5);
  EXPECT_EQ(recorded->results[0].compile_ms, 3);
  EXPECT_EQ(recorded->results[0].benchmark_ms, 3);
  EXPECT_EQ(recorded->results[1].outcome, Outcome::kTimeout);
  EXPECT_EQ(recorded->results[2].outcome, Outcome::kWrongResult);
  EXPECT_EQ(recorded->space.Describe(0), "f=0.5,s=True");
  EXPECT_EQ(recorded->space.Describe(1), "f=0.1,s=False");  // as written, not 0.10000000000000001
}

// A T4 result: `measurements` as given (JSON), the objectives listed.
std::string T4Result(const std::string& config, const std::string& measurements,
                     const std::string& objectives = R"(["time"])", const std::string& extra = "") {
  return R"({"configuration": )" + config + R"(, "invalidity": "correct", "times": {},)" +
         R"( "measurements": )" + measurements + R"(, "objectives": )" + objectives + extra + "}";
}

// Times are read in milliseconds whatever unit the file writes them in, and an objective that
// is not a time (higher is better) is not minimized: the time measured beside it is.
TEST_F(SmallFilesTest, T4TimesInTheirUnitsAndTheObjectiveThatIsATime) {
  auto recorded = ReadRecordedSpace(Write(
      "units_T4.json",
      R"({"metadata": {"timeunit": "seconds"}, "results": [)" +
          T4Result(R"({"a": 1})", R"([{"name": "time", "value": 0.002, "unit": ""}])") + "," +
          T4Result(R"({"a": 2})", R"([{"name": "time", "value": 3000000, "unit": "ns"}])") + "," +
          T4Result(R"({"a": 3})",
                   R"([{"name": "GFLOP/s", "value": 900, "unit": "GFLOP/s"},)"
                   R"( {"name": "time", "value": 4, "unit": "ms"}])",
                   R"(["GFLOP/s", "time"])") +
          "]}"));
  ASSERT_TRUE(recorded.ok()) << recorded.status().ToString();
  EXPECT_DOUBLE_EQ(recorded->results[0].time_ms, 2);
  EXPECT_DOUBLE_EQ(recorded->results[1].time_ms, 3);
  EXPECT_DOUBLE_EQ(recorded->results[2].time_ms, 4);

  // An objective that is no time and no rate, with no time beside it, says so.
  auto no_time = ReadRecordedSpace(
      Write("energy_T4.json",
            R"({"results": [)" +
                T4Result(R"({"a": 1})", R"([{"name": "energy", "value": 9, "unit": "J"}])",
                         R"(["energy"])") +
                "]}"));
  ASSERT_FALSE(no_time.ok());
  EXPECT_THAT(no_time.status().message(),
              HasSubstr("results[0]: correct, but no number for objective energy and no time "
                        "measured (energy is in \"J\", no unit of time)"));
  // Without metadata.timeunit, a result's times are in the unit of its time measurement.
  auto per_result = ReadRecordedSpace(Write(
      "us_T4.json", R"({"results": [{"configuration": {"a": 1}, "invalidity": "correct",)"
                    R"( "times": {"compilation": 5000, "runtimes": [2000, 4000]},)"
                    R"( "measurements": [{"name": "time", "value": 3000, "unit": "\u03bcs"}],)"
                    R"( "objectives": ["time"]}]})"));
  ASSERT_TRUE(per_result.ok()) << per_result.status().ToString();
  EXPECT_DOUBLE_EQ(per_result->results[0].time_ms, 3);
  EXPECT_DOUBLE_EQ(per_result->results[0].compile_ms, 5);
  EXPECT_THAT(per_result->results[0].runtimes_ms, ElementsAre(2, 4));
  auto furlongs = ReadRecordedSpace(Write(
      "furlong_T4.json",
      R"({"results": [)" +
          T4Result(R"({"a": 1})", R"([{"name": "time", "value": 1, "unit": "furlongs"}])") + "]}"));
  ASSERT_FALSE(furlongs.ok());
  EXPECT_THAT(furlongs.status().message(), HasSubstr("(time is in \"furlongs\", no unit of time)"));
  auto bad_unit = ReadRecordedSpace(Write(
      "furlongs_T4.json", R"({"metadata": {"timeunit": "furlongs"}, "results": [)" +
                              T4Result(R"({"a": 1})", R"([{"name": "time", "value": 1}])") + "]}"));
  ASSERT_FALSE(bad_unit.ok());
  EXPECT_THAT(bad_unit.status().message(), HasSubstr("timeunit furlongs is no unit of time"));
}

// Kernel Tuner's conversion of a cache to T4 writes the objective's measurement alone (unit ""),
// and its caches hold a failure in the objective's field: a rate objective without a time is
// read as its inverse, so the highest is the optimum.
TEST_F(SmallFilesTest, ARateObjectiveWithoutATimeIsMaximized) {
  auto t4 = ReadRecordedSpace(Write(
      "gflops_T4.json",
      R"({"results": [)" +
          T4Result(R"({"a": 1})", R"([{"name": "GFLOP/s", "value": 500, "unit": ""}])",
                   R"(["GFLOP/s"])") +
          "," +
          T4Result(R"({"a": 2})", R"([{"name": "GFLOP/s", "value": 1000, "unit": ""}])",
                   R"(["GFLOP/s"])") +
          R"(, {"configuration": {"a": 3}, "invalidity": "runtime", "objectives": ["GFLOP/s"],)"
          R"( "measurements": [{"name": "GFLOP/s", "value": "RuntimeFailedConfig", "unit": ""}]}]})"));
  ASSERT_TRUE(t4.ok()) << t4.status().ToString();
  EXPECT_DOUBLE_EQ(t4->results[0].time_ms, 1.0 / 500);
  EXPECT_DOUBLE_EQ(t4->results[1].time_ms, 1.0 / 1000);
  EXPECT_EQ(t4->results[2].outcome, Outcome::kRuntimeFailed);

  const std::string head =
      R"({"tune_params_keys": ["bx"], "tune_params": {"bx": [32, 64, 128, 256]},)"
      R"( "objective": "GFLOP/s", "cache": {)";
  auto cache = ReadRecordedSpace(
      Write("gflops_cache.json", head + R"("32": {"bx": 32, "GFLOP/s": 500},)"
                                        R"( "64": {"bx": 64, "GFLOP/s": "RuntimeFailedConfig"},)"
                                        R"( "128": {"bx": 128, "time": 4, "GFLOP/s": 250},)"
                                        R"( "256": {"bx": 256, "GFLOP/s": 0}}})"));
  ASSERT_TRUE(cache.ok()) << cache.status().ToString();
  EXPECT_DOUBLE_EQ(cache->results[0].time_ms, 1.0 / 500);
  EXPECT_EQ(cache->results[1].outcome, Outcome::kRuntimeFailed);
  EXPECT_EQ(cache->results[2].time_ms, 4);  // a time recorded is the time
  EXPECT_EQ(cache->results[3].outcome, Outcome::kInvalid);
  auto neither = ReadRecordedSpace(Write("neither.json", head + R"("32": {"bx": 32}}})"));
  ASSERT_FALSE(neither.ok());
  EXPECT_THAT(neither.status().message(),
              HasSubstr("cache entry \"32\": time is neither a number nor a failure, nor is "
                        "GFLOP/s"));
}

// T4 allows a measurement's value to be a string, and some converters write numbers so.
TEST_F(SmallFilesTest, NumbersWrittenAsTextAreNumbers) {
  auto t4 = ReadRecordedSpace(
      Write("text_T4.json",
            R"({"results": [)" + T4Result(R"({"a": 1})", R"([{"name": "time", "value": "2.5"}])") +
                "," + T4Result(R"({"a": 2})", R"([{"name": "time", "value": ["1", "2"]}])") + "," +
                T4Result(R"({"a": 3})", R"([{"name": "time", "value": "2.5ms"}])") + "]}"));
  ASSERT_TRUE(t4.ok()) << t4.status().ToString();
  EXPECT_EQ(t4->results[0].time_ms, 2.5);
  EXPECT_EQ(t4->results[1].time_ms, 1.5);
  EXPECT_EQ(t4->results[2].outcome, Outcome::kInvalid);
  auto cache = ReadRecordedSpace(
      Write("text_cache.json", std::string(kCacheHead) +
                                   R"("32,half": {"bx": 32, "dt": "half", "time": "2.5"},)"
                                   R"("64,half": {"bx": 64, "dt": "half", "time": "1e20"}}})"));
  ASSERT_TRUE(cache.ok()) << cache.status().ToString();
  EXPECT_EQ(cache->results[0].outcome, Outcome::kOk);
  EXPECT_EQ(cache->results[0].time_ms, 2.5);
  EXPECT_EQ(cache->results[1].outcome, Outcome::kInvalid);
}

// A time of 0, below or NaN is a failure of no kind in both formats, not the fastest.
TEST_F(SmallFilesTest, TimesOfZeroOrBelowOrNaNAreFailures) {
  auto t4 = ReadRecordedSpace(
      Write("zero_T4.json",
            R"({"results": [)" + T4Result(R"({"a": 1})", R"([{"name": "time", "value": 0}])") +
                "," + T4Result(R"({"a": 2})", R"([{"name": "time", "value": -1}])") + "," +
                T4Result(R"({"a": 3})", R"([{"name": "time", "value": NaN}])") + "," +
                T4Result(R"({"a": 4})", R"([{"name": "time", "value": 5}])") + "," +
                T4Result(R"({"a": 5})", R"([{"name": "time", "value": [1, 2]}])") + "," +
                T4Result(R"({"a": 6})", R"([{"name": "time", "value": [1, "x"]}])") + "]}"));
  ASSERT_TRUE(t4.ok()) << t4.status().ToString();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(t4->results[i].outcome, Outcome::kInvalid) << i;
  EXPECT_EQ(t4->results[3].outcome, Outcome::kOk);
  // A value per run is read as their mean; one that is not a number is no time.
  EXPECT_EQ(t4->results[4].outcome, Outcome::kOk);
  EXPECT_DOUBLE_EQ(t4->results[4].time_ms, 1.5);
  EXPECT_EQ(t4->results[5].outcome, Outcome::kInvalid);
  auto cache = ReadRecordedSpace(
      Write("zero_cache.json", std::string(kCacheHead) +
                                   R"("32,half": {"bx": 32, "dt": "half", "time": 0},)"
                                   R"("64,half": {"bx": 64, "dt": "half", "time": 2}}})"));
  ASSERT_TRUE(cache.ok()) << cache.status().ToString();
  EXPECT_EQ(cache->results[0].outcome, Outcome::kInvalid);
  EXPECT_EQ(cache->results[1].outcome, Outcome::kOk);
}

// T4 parameters are every configuration key recorded, wherever it first appears; a categorical
// one may mix numbers, strings and null.
TEST_F(SmallFilesTest, T4ParametersFromEveryResultAndMixedValues) {
  const std::string time = R"([{"name": "time", "value": 1}])";
  auto recorded = ReadRecordedSpace(
      Write("mixed_T4.json", R"({"results": [)" + T4Result(R"({"a": 1, "m": 0})", time) + "," +
                                 T4Result(R"({"a": 1, "m": "auto"})", time) + "," +
                                 T4Result(R"({"a": 1, "m": null})", time) + "]}"));
  ASSERT_TRUE(recorded.ok()) << recorded.status().ToString();
  EXPECT_EQ(recorded->space.size(), 3u);
  EXPECT_FALSE(recorded->space.params()[1].ordinal());

  auto later = ReadRecordedSpace(
      Write("later_T4.json", R"({"results": [)" + T4Result(R"({"a": 1})", time) + "," +
                                 T4Result(R"({"a": 1, "u": 2})", time) + "]}"));
  ASSERT_FALSE(later.ok());
  EXPECT_THAT(later.status().message(), HasSubstr("results[0]: no value for u"));
}

// TuneFleet's T4 export names each result's problem: each problem is a recording of its own,
// with the parameter values its results hold.
TEST_F(SmallFilesTest, T4ExportsNameTheirProblem) {
  // Two results, configurations a=1 and a=`second`, of the problems given.
  auto write = [&](const std::string& name, int second, const std::string& first_problem,
                   const std::string& second_problem) {
    const std::string time = R"([{"name": "time", "value": 1}])";
    return Write(
        name, R"({"results": [)" +
                  T4Result(R"({"a": 1})", time, R"(["time"])", ", \"problem\": " + first_problem) +
                  "," +
                  T4Result("{\"a\": " + std::to_string(second) + "}", time, R"(["time"])",
                           ", \"problem\": " + second_problem) +
                  "]}");
  };
  auto one =
      ReadRecordedSpace(write("one_T4.json", 2, R"({"M": 64, "N": 32})", R"({"M": 64, "N": 32})"));
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ(one->problem, "M=64,N=32");
  auto other = ReadRecordedSpace(
      Write("other_T4.json", R"({"problem": "M=64,N=64", "results": [)" +
                                 T4Result(R"({"a": 1})", R"([{"name": "time", "value": 1}])",
                                          R"(["time"])", R"(, "problem": {"M": 64, "N": 32})") +
                                 "]}"));
  ASSERT_FALSE(other.ok());
  EXPECT_THAT(other.status().message(),
              HasSubstr("its problem is M=64,N=64, results[0]'s M=64,N=32"));
  const std::string two =
      write("two_T4.json", 1, R"({"M": 64, "N": 32})", R"({"M": 128, "N": 32})");
  auto both = ReadRecordedSpaces(two);
  ASSERT_TRUE(both.ok()) << both.status().ToString();
  ASSERT_EQ(both->size(), 2u);
  EXPECT_EQ((*both)[0].problem, "M=64,N=32");
  EXPECT_EQ((*both)[1].problem, "M=128,N=32");
  for (const RecordedSpace& r : *both) {
    ASSERT_EQ(r.space.size(), 1u) << r.problem;
    EXPECT_EQ(r.space.Describe(0), "a=1");
    EXPECT_EQ(r.results[0].time_ms, 1);
  }
  // Where one recording is wanted (search_eval), several are refused by name.
  auto one_of_two = ReadRecordedSpace(two);
  ASSERT_FALSE(one_of_two.ok());
  EXPECT_THAT(one_of_two.status().message(),
              HasSubstr("holds results of 2 problems (M=64,N=32; M=128,N=32)"));
  // A result that names no problem among results that do belongs to none of them.
  auto unnamed = ReadRecordedSpaces(Write(
      "unnamed_T4.json",
      R"({"results": [)" +
          T4Result(R"({"a": 1})", R"([{"name": "time", "value": 1}])", R"(["time"])",
                   R"(, "problem": {"M": 64})") +
          "," + T4Result(R"({"a": 2})", R"([{"name": "time", "value": 1}])", R"(["time"])", "") +
          "]}"));
  ASSERT_FALSE(unnamed.ok());
  EXPECT_THAT(unnamed.status().message(),
              HasSubstr("results[1] names no problem, other results do"));
}

TEST_F(SmallFilesTest, ATruncatedGzipFileIsSaidToEndEarly) {
  auto whole = ReadFile(SpaceFile("A100_T4.json.gz"));
  ASSERT_TRUE(whole.ok());
  std::string path = Write("cut_T4.json.gz", whole->substr(0, whole->size() / 2));
  auto cut = ReadRecordedSpace(path);
  ASSERT_FALSE(cut.ok());
  EXPECT_THAT(cut.status().message(), HasSubstr(path + ": the gzip data ends early"));
}

// zlib's own message names the file; it is said once.
TEST_F(SmallFilesTest, AFolderGivenAsASpaceIsNamedOnce) {
  const std::string folder = dir_ / "folder_T4.json";
  std::filesystem::create_directory(folder);
  auto read = ReadRecordedSpace(folder);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().message(), folder + ": Is a directory");
}

TEST_F(SmallFilesTest, ErrorsNameTheFileAndTheEntry) {
  std::string path =
      Write("missing_cache.json", std::string(kCacheHead) + R"("32": {"bx": 32, "time": 1}}})");
  auto missing = ReadRecordedSpace(path);
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr(path));
  EXPECT_THAT(missing.status().message(), HasSubstr("cache entry \"32\": no value for dt"));

  auto outside = ReadRecordedSpace(
      Write("outside_cache.json",
            std::string(kCacheHead) + R"("48,half": {"bx": 48, "dt": "half", "time": 1}}})"));
  ASSERT_FALSE(outside.ok());
  EXPECT_THAT(outside.status().message(), HasSubstr("bx=48 is not among its values"));

  auto twice = ReadRecordedSpace(
      Write("twice_T4.json",
            R"({"results": [{"configuration": {"a": 1}, "invalidity": "compile", "times": {}},)"
            R"( {"configuration": {"a": 1}, "invalidity": "compile", "times": {}}]})"));
  ASSERT_FALSE(twice.ok());
  EXPECT_THAT(twice.status().message(), HasSubstr("a=1 is listed twice"));

  auto no_time = ReadRecordedSpace(
      Write("notime_T4.json",
            R"({"results": [{"configuration": {"a": 1}, "invalidity": "correct", "times": {}}]})"));
  ASSERT_FALSE(no_time.ok());
  EXPECT_THAT(no_time.status().message(), HasSubstr("results[0]: correct, but no number"));

  auto other = ReadRecordedSpace(Write("other.json", R"({"hello": 1})"));
  ASSERT_FALSE(other.ok());
  EXPECT_THAT(other.status().message(), HasSubstr("neither a Kernel Tuner cache file"));

  // `tunefleet export` keeps one configuration per problem: said so, and what to import instead.
  auto exported = ReadRecordedSpace(Write(
      "best.json", R"({"format": "tunefleet-best-configs/1", "kernel": "gemm", "entries": []})"));
  ASSERT_FALSE(exported.ok());
  EXPECT_THAT(exported.status().message(),
              HasSubstr("best.json: a `tunefleet export` file (the best configuration of each "
                        "problem and device class, not the results of a tuning); import a job's "
                        "results as `tunefleet results JOB --format t4 > FILE` writes them"));

  auto garbage = ReadRecordedSpace(Write("garbage.json", "{not json"));
  ASSERT_FALSE(garbage.ok());
  EXPECT_THAT(garbage.status().message(), HasSubstr("not valid JSON"));

  auto absent = ReadRecordedSpace(dir_ / "absent.json");
  ASSERT_FALSE(absent.ok());
  EXPECT_EQ(absent.status().code(), Code::kNotFound);
}

}  // namespace
}  // namespace tf::search
