// The coordinator's search driving (coordinator/search_driver.h), without a
// coordinator: what is proposed, in which batches, and when and why a search
// stops.
#include "coordinator/search_driver.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <deque>
#include <set>

#include "kernelspec/config.h"
#include "kernelspec/validate.h"
#include "search/strategy.h"
#include "tests/test_util.h"

namespace tf::coordinator {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kStart = 1'000'000;

// X, Y in 1..40 with X + Y <= 50 (1,135 valid of 1,600); problem N=1 and,
// when `two_problems`, N=30; the second constraint is there for tests that
// make N matter.
v1::KernelSpec Spec(const std::string& strategy, bool two_problems = false) {
  v1::KernelSpec spec;
  for (const char* name : {"X", "Y"}) {
    v1::Param* p = spec.add_params();
    p->set_name(name);
    p->mutable_range()->set_start(1);
    p->mutable_range()->set_stop(40);
    p->mutable_range()->set_step(1);
  }
  spec.add_constraints("X + Y <= 50");
  spec.add_constraints("X <= N * 40");
  for (int n : two_problems ? std::vector<int>{1, 30} : std::vector<int>{1}) {
    auto* var = spec.add_problems()->add_vars();
    var->set_name("N");
    var->set_value(n);
  }
  spec.mutable_search()->set_strategy(strategy);
  spec.mutable_search()->set_seed(3);
  return spec;
}

int64_t Get(const v1::Config& config, const std::string& name) {
  for (const auto& s : config.settings()) {
    if (s.name() == name) return s.value().int_value();
  }
  ADD_FAILURE() << "no " << name;
  return 0;
}

// A smooth landscape with its optimum at X=30, Y=12.
double Time(const v1::Config& c) {
  return 100 + std::pow(Get(c, "X") - 30, 2) + std::pow(Get(c, "Y") - 12, 2);
}

std::unique_ptr<SearchDriver> Make(const v1::KernelSpec& spec) {
  auto driver = SearchDriver::Create(spec, {}, 1'000'000, kStart);
  EXPECT_TRUE(driver.ok()) << driver.status().ToString();
  return driver.ok() ? std::move(*driver) : nullptr;
}

// Every proposal satisfies the constraints of its problem and is new.
void CheckProposals(const v1::KernelSpec& spec, const std::vector<SearchDriver::Proposal>& batch,
                    std::set<std::string>* seen) {
  for (const auto& p : batch) {
    const int64_t n = spec.problems(p.problem).vars(0).value();
    EXPECT_LE(Get(p.config, "X") + Get(p.config, "Y"), 50);
    EXPECT_LE(Get(p.config, "X"), n * 40);
    EXPECT_TRUE(
        seen->insert(std::to_string(p.problem) + "|" + kernelspec::ConfigKey(p.config)).second)
        << "proposed twice: " << kernelspec::ConfigKey(p.config);
  }
}

// Asks with `window`, tells every proposal (oldest first, half a window at a
// time) with `time`, until the driver is done. Returns the evaluations.
size_t RunToEnd(SearchDriver& driver, const v1::KernelSpec& spec, size_t window,
                const std::function<std::optional<double>(const v1::Config&)>& time,
                size_t* max_in_flight = nullptr) {
  std::set<std::string> seen;
  std::vector<SearchDriver::Proposal> in_flight;
  size_t evaluated = 0;
  for (int round = 0; round < 100000 && !driver.Done(); ++round) {
    auto batch = driver.Ask(window, kStart);
    CheckProposals(spec, batch, &seen);
    in_flight.insert(in_flight.end(), batch.begin(), batch.end());
    if (max_in_flight) *max_in_flight = std::max(*max_in_flight, in_flight.size());
    const size_t tell = std::min(in_flight.size(), std::max<size_t>(1, window / 2));
    for (size_t i = 0; i < tell; ++i) {
      EXPECT_TRUE(
          driver.Tell(in_flight[i].problem, in_flight[i].config, time(in_flight[i].config)));
      ++evaluated;
    }
    in_flight.erase(in_flight.begin(), in_flight.begin() + static_cast<ptrdiff_t>(tell));
  }
  EXPECT_TRUE(driver.Done());
  EXPECT_TRUE(in_flight.empty());
  return evaluated;
}

TEST(SearchDriverTest, ExhaustiveProposesTheWholeValidSpaceAtOnce) {
  v1::KernelSpec spec = Spec("exhaustive");
  auto driver = Make(spec);
  ASSERT_NE(driver, nullptr);
  std::set<std::string> seen;
  auto all = driver->Ask(8, kStart);
  CheckProposals(spec, all, &seen);
  EXPECT_EQ(all.size(), 1135u);
  EXPECT_EQ(driver->SpaceSize(0), 1135u);
  EXPECT_TRUE(driver->Ask(8, kStart).empty());
  EXPECT_EQ(driver->StopReason(), "all 1135 valid configurations evaluated");
  EXPECT_FALSE(driver->Done()) << "results are still to come";
  for (const auto& p : all) driver->Tell(p.problem, p.config, Time(p.config));
  EXPECT_TRUE(driver->Done());
  EXPECT_FALSE(driver->Tell(0, all[0].config, 1.0)) << "told twice";
}

TEST(SearchDriverTest, LearningStrategyKeepsAWindowInFlightAndStopsAtMaxCandidates) {
  for (const char* strategy : {"bayes", "local", "evolutionary", "auto"}) {
    SCOPED_TRACE(strategy);
    v1::KernelSpec spec = Spec(strategy);
    spec.mutable_search()->set_max_candidates(64);
    auto driver = Make(spec);
    ASSERT_NE(driver, nullptr);
    auto first = driver->Ask(8, kStart);
    EXPECT_EQ(first.size(), 8u);
    EXPECT_TRUE(driver->Ask(8, kStart).empty()) << "a full window waits for results";
    for (int i = 0; i < 3; ++i) driver->Tell(0, first[i].config, Time(first[i].config));
    EXPECT_TRUE(driver->Ask(8, kStart).empty()) << "5 of 8 still out: more than half";
    driver->Tell(0, first[3].config, Time(first[3].config));
    EXPECT_EQ(driver->Ask(8, kStart).size(), 4u) << "refilled to the window";

    auto fresh = Make(spec);
    size_t max_in_flight = 0;
    EXPECT_EQ(RunToEnd(*fresh, spec, 8, Time, &max_in_flight), 64u);
    EXPECT_LE(max_in_flight, 8u);
    EXPECT_EQ(fresh->Evaluated(0), 64u);
    EXPECT_EQ(fresh->StopReason(), "search.max_candidates (64) evaluated");
  }
}

TEST(SearchDriverTest, NoImprovementForPatienceEvaluationsStopsAProblem) {
  v1::KernelSpec spec = Spec("random");
  spec.mutable_search()->set_patience(20);
  spec.mutable_search()->set_min_improvement_percent(5);
  auto driver = Make(spec);
  ASSERT_NE(driver, nullptr);
  // Every time within 5% of the first: no evaluation after the first counts.
  size_t evaluated = RunToEnd(*driver, spec, 4, [](const v1::Config& c) {
    return 100.0 - 0.001 * static_cast<double>(Get(c, "X"));
  });
  EXPECT_GE(evaluated, 21u);
  EXPECT_LE(evaluated, 21u + 4u) << "at most a window beyond the stop";
  EXPECT_EQ(driver->StopReason(), "no improvement of 5% in 20 evaluations");
}

TEST(SearchDriverTest, FailuresCountAsEvaluations) {
  v1::KernelSpec spec = Spec("bayes");
  spec.mutable_search()->set_max_candidates(12);
  auto driver = Make(spec);
  ASSERT_NE(driver, nullptr);
  EXPECT_EQ(RunToEnd(*driver, spec, 4, [](const v1::Config&) { return std::nullopt; }), 12u);
}

TEST(SearchDriverTest, MaxSecondsEndsProposalsButNotResultsInFlight) {
  v1::KernelSpec spec = Spec("local");
  spec.mutable_search()->set_max_seconds(2);
  auto driver = Make(spec);
  ASSERT_NE(driver, nullptr);
  auto batch = driver->Ask(4, kStart + 1999);
  ASSERT_EQ(batch.size(), 4u);
  EXPECT_TRUE(driver->Ask(4, kStart + 2000).empty());
  EXPECT_EQ(driver->StopReason(), "search.max_seconds (2 s) reached");
  EXPECT_FALSE(driver->Done());
  for (const auto& p : batch) driver->Tell(p.problem, p.config, Time(p.config));
  EXPECT_TRUE(driver->Done());
}

// The window counts the job's configurations in flight, whatever its number
// of problems: a strategy asked for many at once before any result learns
// nothing from them (docs/search.md, "Asked in batches").
TEST(SearchDriverTest, AJobsProblemsShareTheWindowAndKeepAnEighthOfTheBudgetAtMost) {
  v1::KernelSpec spec = Spec("bayes", /*two_problems=*/true);
  spec.mutable_search()->set_max_candidates(100);
  auto driver = Make(spec);
  ASSERT_NE(driver, nullptr);
  auto first = driver->Ask(16, kStart);
  ASSERT_EQ(first.size(), 16u);
  EXPECT_EQ(std::count_if(first.begin(), first.end(), [](const auto& p) { return p.problem == 0; }),
            8);
  EXPECT_TRUE(driver->Ask(16, kStart).empty());

  spec.mutable_search()->set_max_candidates(40);
  driver = Make(spec);
  ASSERT_NE(driver, nullptr);
  EXPECT_EQ(driver->Ask(64, kStart).size(), 10u) << "5 of each problem's 40";
}

TEST(SearchDriverTest, ExhaustiveWithATimeBudgetIsAskedInWindows) {
  v1::KernelSpec spec = Spec("exhaustive");
  spec.mutable_search()->set_max_seconds(60);
  auto driver = Make(spec);
  ASSERT_NE(driver, nullptr);
  EXPECT_EQ(driver->Ask(8, kStart).size(), 8u) << "so that the budget can stop it";
}

TEST(SearchDriverTest, PendingConfigurationsOfAResumedJobAreNotProposedAgain) {
  v1::KernelSpec spec = Spec("exhaustive");
  auto first = Make(spec);
  ASSERT_NE(first, nullptr);
  auto all = first->Ask(8, kStart);
  ASSERT_GT(all.size(), 10u);
  auto resumed = Make(spec);
  resumed->Tell(0, all[0].config, 5.0);
  resumed->MarkPending(0, all[1].config);
  auto rest = resumed->Ask(8, kStart);
  EXPECT_EQ(rest.size(), all.size() - 2);
  for (const auto& p : rest) {
    EXPECT_NE(kernelspec::ConfigKey(p.config), kernelspec::ConfigKey(all[0].config));
    EXPECT_NE(kernelspec::ConfigKey(p.config), kernelspec::ConfigKey(all[1].config));
  }
  for (const auto& p : rest) resumed->Tell(p.problem, p.config, 1.0);
  EXPECT_FALSE(resumed->Done()) << "the pending one is still out";
  resumed->Tell(0, all[1].config, 1.0);
  EXPECT_TRUE(resumed->Done());
}

TEST(SearchDriverTest, SeedsGoFirstWhenInTheSpace) {
  for (const char* strategy : {"bayes", "exhaustive"}) {
    SCOPED_TRACE(strategy);
    v1::KernelSpec spec = Spec(strategy);
    auto driver = Make(spec);
    ASSERT_NE(driver, nullptr);
    auto seed = kernelspec::ParseConfigKey("X=30,Y=12");
    auto outside = kernelspec::ParseConfigKey("X=40,Y=40");  // X + Y > 50
    auto second = kernelspec::ParseConfigKey("X=2,Y=3");
    ASSERT_TRUE(seed.ok() && outside.ok() && second.ok());
    driver->Seed(0, *outside);
    driver->Seed(0, *seed);
    driver->Seed(0, *seed);
    driver->Seed(0, *second);
    auto batch = driver->Ask(8, kStart);
    ASSERT_GE(batch.size(), 2u);
    EXPECT_EQ(kernelspec::ConfigKey(batch[0].config), "X=30,Y=12");
    EXPECT_EQ(kernelspec::ConfigKey(batch[1].config), "X=2,Y=3");
    std::set<std::string> seen;
    CheckProposals(spec, batch, &seen);
  }
}

// Random with max_candidates searches a sample of the space; a reused result or a warm start
// of a valid configuration outside the sample is the job's all the same: counted against the
// budget, and proposed first.
TEST(SearchDriverTest, ARandomSampleCountsAndProposesValidConfigurationsOutsideIt) {
  v1::KernelSpec spec = Spec("random");
  spec.mutable_search()->set_max_candidates(10);
  std::set<std::string> sample;
  for (const auto& p : Make(spec)->Ask(100, kStart)) sample.insert(kernelspec::ConfigKey(p.config));
  ASSERT_EQ(sample.size(), 10u);
  std::vector<v1::Config> others;  // valid and not in the sample
  for (int x = 1; others.size() < 2; ++x) {
    auto config = kernelspec::ParseConfigKey("X=" + std::to_string(x) + ",Y=1");
    ASSERT_TRUE(config.ok());
    if (!sample.count(kernelspec::ConfigKey(*config))) others.push_back(*config);
  }
  auto invalid = kernelspec::ParseConfigKey("X=40,Y=40");  // X + Y > 50
  ASSERT_TRUE(invalid.ok());

  auto in_sample = kernelspec::ParseConfigKey(*sample.begin());
  ASSERT_TRUE(in_sample.ok());

  auto driver = Make(spec);
  EXPECT_TRUE(driver->Tell(0, others[0], 150));
  EXPECT_FALSE(driver->Tell(0, others[0], 150)) << "told twice";
  EXPECT_FALSE(driver->Tell(0, *invalid, 150));
  driver->Seed(0, *invalid);
  driver->Seed(0, others[1]);
  driver->Seed(0, *in_sample);
  driver->Seed(0, others[1]);
  auto batch = driver->Ask(100, kStart);
  ASSERT_EQ(batch.size(), 9u) << "the budget less the result told";
  // The seeds first, in the order seeded.
  EXPECT_EQ(kernelspec::ConfigKey(batch[0].config), kernelspec::ConfigKey(others[1]));
  EXPECT_EQ(kernelspec::ConfigKey(batch[1].config), *sample.begin());
  for (const auto& p : batch) EXPECT_TRUE(driver->Tell(p.problem, p.config, Time(p.config)));
  EXPECT_TRUE(driver->Done());
  EXPECT_EQ(driver->Evaluated(0), 10u);

  // Resumed after a restart with the outside configuration still leased: not proposed again,
  // and counted when its result comes.
  auto resumed = Make(spec);
  resumed->MarkPending(0, others[0]);
  EXPECT_EQ(resumed->Ask(100, kStart).size(), 9u);
  EXPECT_FALSE(resumed->Done());
  EXPECT_TRUE(resumed->Tell(0, others[0], 150));
  EXPECT_EQ(resumed->Evaluated(0), 1u);
}

// A seed's result is told as a warm start's (Strategy::TellSeed), which
// `auto` keeps from its model: asked two at a time, one told before each ask,
// a job seeded with a poor configuration then proposes what a cold job does
// for the model's share of the budget (told like any result, the seed would
// shorten the model's random design and enter its fits).
TEST(SearchDriverTest, ASeedsResultIsToldAsAWarmStart) {
  v1::KernelSpec spec = Spec("auto");
  spec.mutable_search()->set_max_candidates(40);  // the model proposes 24, the seed included
  auto proposals = [&](const std::string& seed) {
    auto driver = Make(spec);
    std::vector<std::string> keys;
    if (!driver) return keys;
    if (!seed.empty()) driver->Seed(0, *kernelspec::ParseConfigKey(seed));
    std::deque<v1::Config> in_flight;
    while (!driver->Done()) {
      for (auto& p : driver->Ask(2, kStart)) {
        keys.push_back(kernelspec::ConfigKey(p.config));
        in_flight.push_back(std::move(p.config));
      }
      if (in_flight.empty()) break;
      EXPECT_TRUE(driver->Tell(0, in_flight.front(), Time(in_flight.front())));
      in_flight.pop_front();
    }
    return keys;
  };
  const std::vector<std::string> cold = proposals(""), warm = proposals("X=2,Y=3");
  ASSERT_EQ(warm.size(), 40u);
  ASSERT_EQ(cold.size(), 40u);
  EXPECT_EQ(warm[0], "X=2,Y=3");
  EXPECT_EQ(std::vector<std::string>(warm.begin() + 1, warm.begin() + 24),
            std::vector<std::string>(cold.begin(), cold.begin() + 23));
}

// A problem's new best is proposed next to the job's other problems (where
// their spaces hold it: X=30 is not in N=1's); a strategy that does not learn
// proposes as it would alone.
TEST(SearchDriverTest, AProblemsNewBestIsProposedNextToTheOtherProblems) {
  for (const char* strategy : {"bayes", "exhaustive"}) {
    SCOPED_TRACE(strategy);
    v1::KernelSpec spec = Spec(strategy, /*two_problems=*/true);
    *spec.mutable_constraints(1) = "X <= N";  // N=1: X=1 only; N=30: X up to 30
    auto driver = Make(spec);
    ASSERT_NE(driver, nullptr);
    auto tell = [&](const std::string& key, double time) {
      EXPECT_TRUE(driver->Tell(1, *kernelspec::ParseConfigKey(key), time));
    };
    tell("X=30,Y=12", 50);  // the best so far, outside N=1's space
    tell("X=1,Y=5", 40);    // the best so far
    tell("X=1,Y=6", 45);
    std::vector<std::string> first;
    for (const auto& p : driver->Ask(4, kStart)) {
      if (p.problem == 0) first.push_back(kernelspec::ConfigKey(p.config));
    }
    ASSERT_FALSE(first.empty());
    if (std::string(strategy) == "bayes") {
      EXPECT_EQ(first[0], "X=1,Y=5");
    } else {
      EXPECT_EQ(first[0], "X=1,Y=1") << "exhaustive proposes in its own order";
    }
  }
}

TEST(SearchDriverTest, ProblemsStopForTheirOwnReasons) {
  v1::KernelSpec spec = Spec("local", /*two_problems=*/true);
  spec.mutable_search()->set_max_candidates(50);
  *spec.mutable_constraints(1) = "X <= N";  // N=1 leaves X=1 only: 40 configurations
  auto driver = Make(spec);
  ASSERT_NE(driver, nullptr);
  EXPECT_EQ(driver->SpaceSize(0), 40u);
  RunToEnd(*driver, spec, 8, Time);
  EXPECT_EQ(driver->Evaluated(0), 40u);
  EXPECT_EQ(driver->Evaluated(1), 50u);
  EXPECT_EQ(driver->StopReason(),
            "N=1: all 40 valid configurations evaluated; N=30: search.max_candidates (50) "
            "evaluated");
}

TEST(SearchDriverTest, AProblemTheConstraintsLeaveEmptySaysSo) {
  v1::KernelSpec spec = Spec("auto", /*two_problems=*/true);
  *spec.mutable_constraints(1) = "X * N < 30";  // N=30 leaves nothing
  auto driver = Make(spec);
  ASSERT_NE(driver, nullptr);
  EXPECT_EQ(driver->SpaceSize(1), 0u);
  RunToEnd(*driver, spec, 8, Time);
  EXPECT_NE(driver->StopReason().find("N=30: no configuration satisfies the constraints"),
            std::string::npos)
      << driver->StopReason();
}

TEST(SearchDriverTest, ARandomSampleShortOfItsBudgetSaysWhy) {
  v1::KernelSpec spec = Spec("random");
  spec.mutable_search()->set_max_candidates(5000);  // 1,135 valid
  auto driver = Make(spec);
  ASSERT_NE(driver, nullptr);
  RunToEnd(*driver, spec, 8, Time);
  EXPECT_EQ(driver->Evaluated(0), 1135u);
  EXPECT_EQ(driver->StopReason(),
            "all 1135 configurations of the random sample evaluated (search.max_candidates asked "
            "for 5000; the space has no more valid configurations, or they are too rare to draw)");
}

TEST(SearchDriverTest, LearningStrategyWithoutBudgetStopsOnDefaultPatience) {
  v1::KernelSpec spec = Spec("bayes");
  auto driver = Make(spec);
  ASSERT_NE(driver, nullptr);
  size_t evaluated = RunToEnd(*driver, spec, 8, Time);
  EXPECT_LT(evaluated, 1135u);
  EXPECT_EQ(driver->StopReason(), "no improvement of 1% in 100 evaluations");
}

TEST(SearchDriverTest, UnorderedValuesAndStringsAreProposedAsTheSpecWritesThem) {
  v1::KernelSpec spec;
  v1::Param* x = spec.add_params();
  x->set_name("X");
  for (int v : {64, 16, 32}) *x->add_values() = kernelspec::IntValue(v);
  v1::Param* kind = spec.add_params();
  kind->set_name("KIND");
  for (const char* v : {"fast", "safe"}) *kind->add_values() = kernelspec::StrValue(v);
  spec.add_constraints("X != 16 or KIND == \"safe\"");
  spec.add_problems()->add_vars()->set_name("N");
  spec.mutable_search()->set_strategy("local");
  auto driver = Make(spec);
  ASSERT_NE(driver, nullptr);
  std::set<std::string> keys;
  while (!driver->Done()) {
    for (const auto& p : driver->Ask(2, kStart)) {
      keys.insert(kernelspec::ConfigKey(p.config));
      EXPECT_TRUE(driver->Tell(p.problem, p.config, 1.0));
    }
  }
  EXPECT_EQ(keys, (std::set<std::string>{"X=16,KIND=safe", "X=32,KIND=fast", "X=32,KIND=safe",
                                         "X=64,KIND=fast", "X=64,KIND=safe"}));
}

TEST(SearchDriverTest, SpecValidationAcceptsEveryStrategyName) {
  kernelspec::LoadedSpec loaded = testing::LoadTestSpec("examples/cpu/gemm/gemm.yaml");
  for (const std::string& name : search::StrategyNames()) {
    loaded.spec.mutable_search()->set_strategy(name);
    EXPECT_TRUE(kernelspec::ValidateSpec(loaded.spec, loaded.sources, {}).ok()) << name;
  }
  loaded.spec.mutable_search()->set_strategy("annealing");
  EXPECT_FALSE(kernelspec::ValidateSpec(loaded.spec, loaded.sources, {}).ok());
}

TEST(SearchDriverTest, ASpaceOverTheLimitIsRefusedNamingTheProblem) {
  auto driver = SearchDriver::Create(Spec("bayes"), {}, 100, kStart);
  ASSERT_FALSE(driver.ok());
  EXPECT_THAT(driver.status().message(),
              HasSubstr("problem N=1: the space has 1135 valid configurations, more than the "
                        "limit of 100"));
}

}  // namespace
}  // namespace tf::coordinator
