// Finalists timed again in alternation: who the finalists are, the order of
// the rounds, each one's figure, and the winner picked from that figure.
#include "coordinator/finalists.h"

#include <gtest/gtest.h>

#include "runner/alternation.h"

namespace tf {
namespace {

namespace v1 = ::tunefleet::v1;

TEST(PickFinalistsTest, FastestFirstUpToTheCount) {
  std::vector<coordinator::TimedCandidate> timed = {{1, 30}, {2, 10}, {3, 20}, {4, 10}, {5, 40}};
  EXPECT_EQ(coordinator::PickFinalists(timed, 3), (std::vector<int64_t>{2, 4, 3}));
  EXPECT_EQ(coordinator::PickFinalists(timed, 9), (std::vector<int64_t>{2, 4, 3, 1, 5}));
}

TEST(PickFinalistsTest, NoneWhenThereIsNothingToAlternate) {
  EXPECT_TRUE(coordinator::PickFinalists({{1, 30}, {2, 10}}, 1).empty());
  EXPECT_TRUE(coordinator::PickFinalists({{1, 30}, {2, 10}}, 0).empty());
  EXPECT_TRUE(coordinator::PickFinalists({{1, 30}}, 4).empty());
}

TEST(AlternationTest, EveryRoundTimesEachOnceStartingOneFurther) {
  EXPECT_EQ(runner::RoundOrder(4, 0), (std::vector<size_t>{0, 1, 2, 3}));
  EXPECT_EQ(runner::RoundOrder(4, 1), (std::vector<size_t>{1, 2, 3, 0}));
  EXPECT_EQ(runner::RoundOrder(4, 5), (std::vector<size_t>{1, 2, 3, 0}));
  // Over `count` rounds each candidate takes each place once.
  for (size_t place = 0; place < 3; ++place) {
    std::vector<int> seen(3, 0);
    for (size_t round = 0; round < 3; ++round) ++seen[runner::RoundOrder(3, round)[place]];
    EXPECT_EQ(seen, (std::vector<int>{1, 1, 1})) << "place " << place;
  }
}

TEST(AlternationTest, SamplesAreTakenRoundByRoundAndEachFigureIsTheMedianOfItsSamples) {
  // The device slows down over the re-timing: candidate 1 is always 10%
  // faster than 0 in the same round, although its late samples are slower
  // than 0's early ones, as they would be were each timed one after the
  // other.
  std::vector<size_t> calls;
  auto sample = [&](size_t i) -> Result<v1::TimingStats> {
    const double drift = 100.0 * (1 + calls.size() / 2);
    calls.push_back(i);
    v1::TimingStats stats;
    stats.set_median_ns(i == 0 ? drift : 0.9 * drift);
    stats.set_core_clock_mhz(1000 - static_cast<double>(calls.size()));
    return stats;
  };
  auto timed = runner::TimeInAlternation(2, 5, sample);
  EXPECT_EQ(calls, (std::vector<size_t>{0, 1, 1, 0, 0, 1, 1, 0, 0, 1}));
  ASSERT_TRUE(timed[0].ok() && timed[1].ok());
  EXPECT_EQ(timed[0]->repeats(), 5);
  EXPECT_DOUBLE_EQ(timed[0]->median_ns(), 300);
  EXPECT_DOUBLE_EQ(timed[1]->median_ns(), 270);
  EXPECT_DOUBLE_EQ(timed[1]->min_ns(), 90);
  EXPECT_DOUBLE_EQ(timed[0]->core_clock_mhz(), 991);  // its last sample's reading
}

TEST(AlternationTest, AFailedSampleDropsItsCandidateOnly) {
  std::vector<size_t> calls;
  auto sample = [&](size_t i) -> Result<v1::TimingStats> {
    calls.push_back(i);
    if (i == 1 && calls.size() > 3) return Status::Internal("launch failed");
    v1::TimingStats stats;
    stats.set_median_ns(100.0 + static_cast<double>(i));
    return stats;
  };
  auto timed = runner::TimeInAlternation(3, 3, sample);
  EXPECT_EQ(calls, (std::vector<size_t>{0, 1, 2, 1, 2, 0, 2, 0}));
  ASSERT_FALSE(timed[1].ok());
  EXPECT_EQ(timed[1].status().message(), "launch failed");
  ASSERT_TRUE(timed[0].ok() && timed[2].ok());
  EXPECT_EQ(timed[0]->repeats(), 3);
  EXPECT_EQ(timed[2]->repeats(), 3);
}

TEST(AlternationTest, SamplesShareTheSpecsMinimumTime) {
  v1::BenchmarkSettings spec;
  spec.set_warmup_ms(10);
  spec.set_min_time_ms(40);
  spec.set_min_repeats(5);
  spec.set_max_repeats(1000);
  spec.set_flush_l2(true);
  v1::BenchmarkSettings sample = runner::SampleSettings(spec);
  EXPECT_DOUBLE_EQ(sample.min_time_ms() * runner::kAlternationRounds,
                   runner::kAlternationTimeFactor * spec.min_time_ms());
  EXPECT_EQ(sample.warmup_ms(), 0);
  EXPECT_EQ(sample.min_repeats(), 1);
  EXPECT_TRUE(sample.flush_l2());
}

v1::CandidateResult Retimed(int64_t id, v1::ResultStatus status, double median_ns) {
  v1::CandidateResult r;
  r.set_candidate_id(id);
  r.set_status(status);
  if (median_ns > 0) {
    r.mutable_retiming()->set_median_ns(median_ns);
    r.mutable_retiming()->set_repeats(20);
  }
  return r;
}

TEST(RetimeWinnerTest, TheFastestReTimingWinsNotTheSearchsTiming) {
  std::vector<v1::CandidateResult> reported = {
      Retimed(7, v1::RESULT_STATUS_OK, 105), Retimed(3, v1::RESULT_STATUS_OK, 99),
      Retimed(5, v1::RESULT_STATUS_RUNTIME_FAILED, 0), Retimed(9, v1::RESULT_STATUS_OK, 99)};
  reported[0].mutable_timing()->set_median_ns(50);  // the search's figure: not used
  EXPECT_EQ(coordinator::RetimeWinner(reported), 3);
}

TEST(RetimeWinnerTest, NoneWithoutAnOkReTiming) {
  EXPECT_EQ(coordinator::RetimeWinner({Retimed(5, v1::RESULT_STATUS_RUNTIME_FAILED, 0),
                                       Retimed(6, v1::RESULT_STATUS_OK, 0)}),
            std::nullopt);
}

}  // namespace
}  // namespace tf
