#include "client/t4_format.h"

#include <gtest/gtest.h>

#include "common/files.h"
#include "common/subprocess.h"
#include "kernelspec/config.h"
#include "search/recorded_space.h"
#include "search/recorded_timing.h"
#include "tests/test_util.h"

namespace tf::client {
namespace {

v1::CandidateResult Result(int64_t bm, v1::ResultStatus status, double median_ns) {
  v1::CandidateResult result;
  result.set_status(status);
  auto* setting = result.mutable_config()->add_settings();
  setting->set_name("BM");
  *setting->mutable_value() = kernelspec::IntValue(bm);
  setting = result.mutable_config()->add_settings();
  setting->set_name("DT");
  *setting->mutable_value() = kernelspec::StrValue("half");
  auto* var = result.mutable_problem()->add_vars();
  var->set_name("M");
  var->set_value(4096);
  result.mutable_timing()->set_median_ns(median_ns);
  result.mutable_timing()->set_p10_ns(median_ns * 0.9);
  result.mutable_timing()->set_p90_ns(median_ns * 1.1);
  result.mutable_timing()->set_min_ns(median_ns * 0.8);
  return result;
}

// Validates `document` against the checked-in T4 schema with Debian's
// python3-jsonschema; the validator's complaint when it is invalid.
std::string SchemaErrors(const Json& document, const testing::TempDir& dir) {
  EXPECT_TRUE(WriteFileAtomic(dir / "t4.json", document.dump()).ok());
  auto run = RunProcess(
      {"python3", "-c",
       "import json, sys, jsonschema\n"
       "schema = json.load(open(sys.argv[1]))\n"
       "jsonschema.Draft202012Validator.check_schema(schema)\n"
       "jsonschema.Draft202012Validator(schema).validate(json.load(open(sys.argv[2])))\n",
       testing::SourcePath("tests/data/t4/results-schema.json"), dir / "t4.json"},
      testing::WithTimeout(60));
  if (!run.ok()) return run.status().ToString();
  return run->success() ? "" : run->output;
}

TEST(T4FormatTest, EveryOutcomeValidatesAndReadsBack) {
  std::vector<v1::CandidateResult> results = {
      Result(64, v1::RESULT_STATUS_OK, 2e6),
      Result(128, v1::RESULT_STATUS_OK, 1.5e6),
      Result(16, v1::RESULT_STATUS_COMPILE_FAILED, 0),
      Result(32, v1::RESULT_STATUS_RUNTIME_FAILED, 0),
      Result(48, v1::RESULT_STATUS_WRONG_RESULT, 0),
      Result(80, v1::RESULT_STATUS_TIMEOUT, 0),
      Result(96, v1::RESULT_STATUS_PRUNED, 0),
      Result(112, v1::RESULT_STATUS_UNSPECIFIED, 0),  // not run yet: left out
  };
  Json t4 = T4Results(results);
  testing::TempDir dir;
  EXPECT_EQ(SchemaErrors(t4, dir), "");
  ASSERT_EQ(t4["results"].size(), 7u);
  EXPECT_EQ(t4["results"][0]["configuration"], Json({{"BM", 64}, {"DT", "half"}}));
  EXPECT_EQ(t4["results"][1]["measurements"][0]["value"], 1.5);
  EXPECT_EQ(t4["results"][6]["invalidity"], "constraints");

  // Kernel Tuner's readers (here TuneFleet's own) find the optimum in it.
  auto recorded = search::ReadRecordedSpace(dir / "t4.json");
  ASSERT_TRUE(recorded.ok()) << recorded.status().ToString();
  ASSERT_EQ(recorded->results.size(), 7u);
  int ok = 0;
  double best = 1e300;
  for (const search::RecordedResult& r : recorded->results) {
    if (r.outcome != search::Outcome::kOk) continue;
    ++ok;
    best = std::min(best, r.time_ms);
  }
  EXPECT_EQ(ok, 2);
  EXPECT_DOUBLE_EQ(best, 1.5);
}

// `tunefleet results --format t4` then `tunefleet import results`: the spread
// of the runs comes back as written, not the median three times.
TEST(T4FormatTest, TheSpreadOfTheRunsReadsBack) {
  testing::TempDir dir;
  ASSERT_TRUE(
      WriteFileAtomic(dir / "t4.json", T4Results({Result(64, v1::RESULT_STATUS_OK, 2e6)}).dump())
          .ok());
  auto recorded = search::ReadRecordedSpace(dir / "t4.json");
  ASSERT_TRUE(recorded.ok()) << recorded.status().ToString();
  const v1::TimingStats timing = search::RecordedTiming(recorded->results[0]);
  EXPECT_NEAR(timing.median_ns(), 2e6, 1e-3);
  EXPECT_NEAR(timing.p10_ns(), 1.8e6, 1e-3);
  EXPECT_NEAR(timing.p90_ns(), 2.2e6, 1e-3);
  EXPECT_NEAR(timing.min_ns(), 1.6e6, 1e-3);
}

TEST(T4FormatTest, TheSchemaCheckRefusesWhatIsNotT4) {
  Json t4 = T4Results({Result(64, v1::RESULT_STATUS_OK, 2e6)});
  testing::TempDir dir;
  t4["results"][0]["invalidity"] = "fine";
  EXPECT_NE(SchemaErrors(t4, dir).find("'fine' is not one of"), std::string::npos);
  t4["results"][0].erase("invalidity");
  EXPECT_NE(SchemaErrors(t4, dir).find("'invalidity' is a required property"), std::string::npos);
}

}  // namespace
}  // namespace tf::client
