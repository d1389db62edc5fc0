#include "search/strategy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>

#include "search/neighbours.h"
#include "search/recorded_space.h"
#include "search/surrogate.h"
#include "tests/test_util.h"

namespace tf::search {
namespace {

using ::testing::HasSubstr;

const RecordedSpace& A100() {
  static const RecordedSpace* space = [] {
    auto recorded =
        ReadRecordedSpace(testing::SourcePath("tests/data/spaces/convolution/A100_T4.json.gz"));
    EXPECT_TRUE(recorded.ok()) << recorded.status().ToString();
    return new RecordedSpace(std::move(*recorded));
  }();
  return *space;
}

std::optional<double> Objective(const RecordedSpace& recorded, ConfigId id) {
  const RecordedResult& r = recorded.results[id];
  if (r.outcome != Outcome::kOk) return std::nullopt;
  return r.time_ms;
}

// Runs `name` for `evaluations`, asking in batches of `batch`, telling each
// recorded result; returns the proposals in order.
std::vector<ConfigId> Propose(const std::string& name, const RecordedSpace& recorded, uint64_t seed,
                              size_t evaluations, size_t batch) {
  auto strategy = MakeStrategy(name, recorded.space, {.seed = seed, .budget = evaluations});
  EXPECT_TRUE(strategy.ok()) << strategy.status().ToString();
  std::vector<ConfigId> proposed;
  while (proposed.size() < evaluations) {
    std::vector<ConfigId> ask = (*strategy)->Ask(std::min(batch, evaluations - proposed.size()));
    if (ask.empty()) break;
    for (ConfigId id : ask) {
      proposed.push_back(id);
      (*strategy)->Tell(id, Objective(recorded, id));
    }
  }
  return proposed;
}

class EveryStrategyTest : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryStrategyTest, ProposesDistinctConfigurationsOfTheSpace) {
  std::vector<ConfigId> proposed = Propose(GetParam(), A100(), 1, 300, 7);
  EXPECT_EQ(proposed.size(), 300u);
  std::set<ConfigId> distinct(proposed.begin(), proposed.end());
  EXPECT_EQ(distinct.size(), proposed.size());
  EXPECT_LT(*distinct.rbegin(), A100().space.size());
}

TEST_P(EveryStrategyTest, SameSeedSameProposals) {
  EXPECT_EQ(Propose(GetParam(), A100(), 5, 120, 4), Propose(GetParam(), A100(), 5, 120, 4));
}

// A small space is proposed whole, each configuration once, then Ask is empty.
TEST_P(EveryStrategyTest, ExhaustsASmallSpace) {
  std::vector<Parameter> params = {{"a", {int64_t{1}, int64_t{2}, int64_t{4}}},
                                   {"b", {std::string("x"), std::string("y")}}};
  std::vector<uint32_t> indices = {0, 0, 1, 0, 2, 0, 2, 1, 0, 1};  // (1,y) and (2,y) excluded
  auto space = Space::Create(params, indices);
  ASSERT_TRUE(space.ok());
  auto strategy = MakeStrategy(GetParam(), *space, {.seed = 3, .budget = 0});
  ASSERT_TRUE(strategy.ok());
  std::multiset<ConfigId> seen;
  for (int round = 0; round < 10; ++round) {
    for (ConfigId id : (*strategy)->Ask(2)) {
      seen.insert(id);
      (*strategy)->Tell(id, id == 3 ? std::nullopt : std::optional<double>(1.0 + id));
    }
  }
  EXPECT_EQ(seen, (std::multiset<ConfigId>{0, 1, 2, 3, 4}));
  EXPECT_TRUE((*strategy)->Ask(1).empty());
}

// Told configurations (warm starts, known results) are never proposed.
TEST_P(EveryStrategyTest, NeverProposesWhatItWasTold) {
  const RecordedSpace& recorded = A100();
  auto strategy = MakeStrategy(GetParam(), recorded.space, {.seed = 9, .budget = 200});
  ASSERT_TRUE(strategy.ok());
  std::set<ConfigId> told;
  for (ConfigId id = 0; id < recorded.space.size(); id += 50) {
    (*strategy)->Tell(id, Objective(recorded, id));
    told.insert(id);
  }
  for (int round = 0; round < 40; ++round) {
    for (ConfigId id : (*strategy)->Ask(5)) {
      EXPECT_FALSE(told.count(id)) << id;
      (*strategy)->Tell(id, Objective(recorded, id));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Search, EveryStrategyTest, ::testing::ValuesIn(StrategyNames()));

// A space the budget covers is run whole in a random order, not in the order the space lists
// it (a file may list the best last), and without learning, so that it is built at once.
TEST(StrategyTest, AutoRunsASpaceTheBudgetCoversWholeInARandomOrder) {
  const size_t size = A100().space.size();
  auto whole = [&](uint64_t seed) {
    auto strategy = MakeStrategy("auto", A100().space, {.seed = seed, .budget = size});
    EXPECT_TRUE(strategy.ok());
    EXPECT_FALSE((*strategy)->Adaptive());
    return (*strategy)->Ask(size);
  };
  const std::vector<ConfigId> first = whole(1);
  ASSERT_EQ(std::set<ConfigId>(first.begin(), first.end()).size(), size);
  std::vector<ConfigId> listed(size);
  std::iota(listed.begin(), listed.end(), ConfigId{0});
  EXPECT_NE(first, listed);
  EXPECT_NE(first, whole(2));
}

// Told log times, the model must not depend on their unit: times in ns are the ms times' logs
// plus ln 10^6, and every prediction moves by that alone (the spread not at all).
TEST(SurrogateTest, AUnitOfTimeShiftsEveryPredictionAndNothingElse) {
  std::vector<float> rows, targets;
  for (int x = 0; x < 12; ++x) {
    for (int y = 0; y < 12; ++y) {
      rows.insert(rows.end(), {float(x), float(y)});
      targets.push_back(std::log(1.0f + std::abs(x - 7) * 0.5f + (y % 4 == 0 ? 2.0f : 0.0f)));
    }
  }
  const float shift = std::log(1e6f);
  std::vector<float> shifted = targets;
  for (float& t : shifted) t += shift;
  Surrogate in_ms(4, 11), in_ns(4, 11);
  ASSERT_TRUE(in_ms.Fit(rows, 2, targets).ok());
  ASSERT_TRUE(in_ns.Fit(rows, 2, shifted).ok());
  std::vector<float> mean_ms, spread_ms, mean_ns, spread_ns;
  ASSERT_TRUE(in_ms.Predict(rows, 2, &mean_ms, &spread_ms).ok());
  ASSERT_TRUE(in_ns.Predict(rows, 2, &mean_ns, &spread_ns).ok());
  for (size_t i = 0; i < targets.size(); ++i) {
    EXPECT_NEAR(mean_ns[i] - mean_ms[i], shift, 1e-3) << i;
    EXPECT_NEAR(spread_ns[i], spread_ms[i], 1e-3) << i;
  }
}

TEST(StrategyTest, RandomSeedsDiffer) {
  EXPECT_NE(Propose("random", A100(), 1, 50, 1), Propose("random", A100(), 2, 50, 1));
}

// Whether `next` is a neighbour of the best of `evaluated` (one parameter
// changed to any value): where local search starts from when it takes over.
bool NeighboursTheBest(const std::vector<ConfigId>& evaluated, ConfigId next) {
  ConfigId best = evaluated[0];
  for (ConfigId id : evaluated) {
    if (Objective(A100(), id) &&
        (!Objective(A100(), best) || *Objective(A100(), id) < *Objective(A100(), best))) {
      best = id;
    }
  }
  for (const Neighbour& n : Neighbours(A100().space, best, std::numeric_limits<uint32_t>::max())) {
    if (n.id == next) return true;
  }
  return false;
}

// auto with a budget past the model's cap of 100: the model's proposals
// first, exactly as bayes makes them, then hill climbing; asked in batches,
// so some of the model's proposals are still untold when local search takes
// over, and none is proposed twice.
TEST(StrategyTest, AutoIsBayesThenLocalSearch) {
  const std::vector<ConfigId> model = Propose("bayes", A100(), 4, 100, 1);
  const std::vector<ConfigId> all = Propose("auto", A100(), 4, 250, 1);
  ASSERT_EQ(all.size(), 250u);
  EXPECT_TRUE(std::equal(model.begin(), model.end(), all.begin()));
  const std::vector<ConfigId> batched = Propose("auto", A100(), 4, 250, 6);
  EXPECT_EQ(std::set<ConfigId>(batched.begin(), batched.end()).size(), 250u);
  EXPECT_TRUE(NeighboursTheBest(model, all[100])) << A100().space.Describe(all[100]);
}

// Under the cap, the model has 60% of the budget and local search the rest.
TEST(StrategyTest, AutoHandsOverAt60PercentOfTheBudget) {
  const std::vector<ConfigId> model = Propose("bayes", A100(), 4, 100, 1);
  const std::vector<ConfigId> all = Propose("auto", A100(), 4, 100, 1);
  ASSERT_EQ(all.size(), 100u);
  EXPECT_TRUE(std::equal(all.begin(), all.begin() + 60, model.begin()));
  const std::vector<ConfigId> first(all.begin(), all.begin() + 60);
  EXPECT_TRUE(NeighboursTheBest(first, all[60])) << A100().space.Describe(all[60]);
}

// A warm start's result (TellSeed) is kept from auto's model, which proposes
// what it would cold (told another device's best, it would search near it),
// and goes to the hill climbing, which starts from the seed when it is the
// best found.
TEST(StrategyTest, AutoKeepsSeedsFromItsModelAndClimbsFromTheBest) {
  const RecordedSpace& recorded = A100();
  ConfigId optimum = 0;
  for (ConfigId id = 0; id < recorded.space.size(); ++id) {
    if (Objective(recorded, id) &&
        (!Objective(recorded, optimum) || *Objective(recorded, id) < *Objective(recorded, optimum)))
      optimum = id;
  }
  const std::vector<ConfigId> cold = Propose("auto", recorded, 5, 100, 1);
  ASSERT_EQ(std::count(cold.begin(), cold.begin() + 60, optimum), 0);
  auto warm = MakeStrategy("auto", recorded.space, {.seed = 5, .budget = 100});
  ASSERT_TRUE(warm.ok());
  (*warm)->TellSeed(optimum, Objective(recorded, optimum));
  std::vector<ConfigId> proposed;
  for (int i = 0; i < 60; ++i) {  // the seed is one of the model's 60% of the budget
    proposed.push_back((*warm)->Ask(1).at(0));
    (*warm)->Tell(proposed.back(), Objective(recorded, proposed.back()));
  }
  EXPECT_TRUE(std::equal(proposed.begin(), proposed.begin() + 59, cold.begin()));
  EXPECT_TRUE(NeighboursTheBest({optimum}, proposed[59])) << recorded.space.Describe(proposed[59]);
}

// Asked for several at once, bayes believes each proposal not yet told came
// back at the slowest time seen so far (a constant liar): its batch is what
// it proposes asked one at a time and told that time after each, refits
// included, not the top eight of one ranking.
TEST(StrategyTest, BayesBatchIsWhatOneAtATimeProposesToldTheSlowestTime) {
  const RecordedSpace& recorded = A100();
  auto batched = MakeStrategy("bayes", recorded.space, {.seed = 3, .budget = 100});
  auto single = MakeStrategy("bayes", recorded.space, {.seed = 3, .budget = 100});
  ASSERT_TRUE(batched.ok() && single.ok());
  double slowest = 0;
  for (int i = 0; i < 30; ++i) {
    const std::vector<ConfigId> a = (*batched)->Ask(1), b = (*single)->Ask(1);
    ASSERT_EQ(a, b);
    const std::optional<double> time = Objective(recorded, a[0]);
    if (time) slowest = std::max(slowest, *time);
    (*batched)->Tell(a[0], time);
    (*single)->Tell(b[0], time);
  }
  const std::vector<ConfigId> batch = (*batched)->Ask(8);
  std::vector<ConfigId> one_at_a_time;
  for (int i = 0; i < 8; ++i) {
    one_at_a_time.push_back((*single)->Ask(1).at(0));
    (*single)->Tell(one_at_a_time.back(), slowest);
  }
  EXPECT_EQ(batch, one_at_a_time);
}

// The random initial design (a tenth of the budget: 10 of 100) counts the
// proposals not yet told, so asking 8 at a time does not draw 16 at random.
TEST(StrategyTest, BayesInitialDesignCountsProposalsNotYetTold) {
  const std::vector<ConfigId> random = Propose("random", A100(), 2, 16, 1);
  const std::vector<ConfigId> bayes = Propose("bayes", A100(), 2, 100, 8);
  ASSERT_EQ(bayes.size(), 100u);
  EXPECT_TRUE(std::equal(random.begin(), random.begin() + 10, bayes.begin()));
  EXPECT_NE(std::vector<ConfigId>(random.begin() + 10, random.end()),
            std::vector<ConfigId>(bayes.begin() + 10, bayes.begin() + 16));
}

// Where the model cannot tell configurations apart (here every one is as
// fast), it picks among them at random, not the first listed: a space listed
// fastest first (a results table) must not steer the search.
TEST(StrategyTest, BayesBreaksTiesAtRandomNotInTheOrderTheSpaceLists) {
  std::vector<Value> values;
  std::vector<uint32_t> indices;
  for (uint32_t x = 0; x < 20; ++x) {
    values.emplace_back(int64_t{x});
    for (uint32_t y = 0; y < 20; ++y) indices.insert(indices.end(), {x, y});
  }
  auto space = Space::Create({{"X", values}, {"Y", values}}, indices);
  ASSERT_TRUE(space.ok()) << space.status().ToString();
  auto strategy = MakeStrategy("bayes", *space, {.seed = 5, .budget = 100});
  ASSERT_TRUE(strategy.ok());
  std::set<ConfigId> proposed;
  int lowest_unproposed = 0;
  for (int i = 0; i < 60; ++i) {
    std::vector<ConfigId> ask = (*strategy)->Ask(1);
    ASSERT_EQ(ask.size(), 1u);
    ConfigId lowest = 0;
    while (proposed.contains(lowest)) ++lowest;
    lowest_unproposed += ask[0] == lowest;
    proposed.insert(ask[0]);
    (*strategy)->Tell(ask[0], 1.0);
  }
  EXPECT_LE(lowest_unproposed, 2) << "of 60 proposals, the first listed not yet proposed";
}

TEST(StrategyTest, UnknownNameListsTheKnownOnes) {
  auto strategy = MakeStrategy("anneal", A100().space, {});
  ASSERT_FALSE(strategy.ok());
  EXPECT_THAT(strategy.status().message(), HasSubstr("unknown search strategy \"anneal\""));
  for (const std::string& name : StrategyNames()) {
    EXPECT_THAT(strategy.status().message(), HasSubstr(name));
  }
}

}  // namespace
}  // namespace tf::search
