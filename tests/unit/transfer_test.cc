// Warm starts ranked from other tuning runs (search/transfer.h).
#include "search/transfer.h"

#include <gtest/gtest.h>

namespace tf::search {
namespace {

// Two devices, one three times faster than the other. "fast_only" is the
// fast device's optimum and slow on the other; "everywhere" is near both
// optima. Times are compared within a device, never across devices.
TEST(TransferTest, AConfigurationGoodOnEveryDeviceGoesBeforeOneDeviceOptimum) {
  const std::vector<std::vector<KeyedResult>> sources = {
      {{"fast_only", 1.0}, {"everywhere", 1.1}, {"slow", 5.0}},
      {{"fast_only", 30.0}, {"everywhere", 3.0}, {"slow", 3.2}, {"other", 4.0}},
  };
  EXPECT_EQ(WarmStartRanking(sources).Rank(1), std::vector<std::string>{"everywhere"});
  // Mean fraction of each optimum: everywhere (0.91 + 1) / 2, fast_only (1 +
  // 0.1) / 2, slow (0.2 + 0.94) / 2, other (0 + 0.75) / 2.
  EXPECT_EQ(WarmStartRanking(sources).Rank(10),
            (std::vector<std::string>{"everywhere", "slow", "fast_only", "other"}));
}

// A failure and a configuration a run did not measure count as nothing there;
// a run without a success says nothing.
TEST(TransferTest, FailuresAndUnmeasuredConfigurationsCountAsZero) {
  const std::vector<std::vector<KeyedResult>> sources = {
      {{"a", 1.0}, {"b", 2.0}, {"c", std::nullopt}},
      {{"b", 1.0}, {"c", 1.0}},
      {{"a", std::nullopt}, {"b", std::nullopt}},
  };
  // a: (1 + 0) / 2, b: (0.5 + 1) / 2, c: (0 + 1) / 2.
  EXPECT_EQ(WarmStartRanking(sources).Rank(3), (std::vector<std::string>{"b", "a", "c"}));
  EXPECT_TRUE(WarmStartRanking({}).Rank(3).empty());
  EXPECT_TRUE(WarmStartRanking({{{"a", std::nullopt}}}).Rank(3).empty());
}

// Measured twice in one run (two jobs), a configuration counts at its best.
TEST(TransferTest, ARepeatedConfigurationCountsAtItsBest) {
  const std::vector<std::vector<KeyedResult>> sources = {
      {{"a", 2.0}, {"b", 1.5}, {"a", 1.0}, {"b", std::nullopt}},
  };
  EXPECT_EQ(WarmStartRanking(sources).Rank(2), (std::vector<std::string>{"a", "b"}));
}

// A job's problem already tuned on its device class leaves its own run out:
// the ranking is that of the other runs alone, ties in the order the keys
// first appear in them, and a key only the left-out run holds is not seeded.
TEST(TransferTest, ALeftOutRunIsNotCounted) {
  const std::vector<std::vector<KeyedResult>> sources = {
      {{"x", 1.0}, {"y", 2.0}},
      {{"y", 1.0}, {"x", 1.0}},
      {{"z", 1.0}, {"x", 3.0}, {"y", 3.0}},
  };
  const WarmStartRanking ranking(sources);
  // x: 1 + 1 + 1/3, y: 0.5 + 1 + 1/3, z: 1.
  EXPECT_EQ(ranking.Rank(3), (std::vector<std::string>{"x", "y", "z"}));
  // Without the first run x and y tie at 1 + 1/3, and y comes first in the second.
  EXPECT_EQ(ranking.Rank(3, 0), (std::vector<std::string>{"y", "x", "z"}));
  EXPECT_EQ(ranking.Rank(3, 0), WarmStartRanking({sources[1], sources[2]}).Rank(3));
  EXPECT_EQ(ranking.Rank(3, 2), (std::vector<std::string>{"x", "y"}));
}

}  // namespace
}  // namespace tf::search
