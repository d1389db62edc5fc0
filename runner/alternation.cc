#include "runner/alternation.h"

#include <optional>

#include "runner/benchmark.h"

namespace tf::runner {

std::vector<size_t> RoundOrder(size_t count, size_t round) {
  std::vector<size_t> order;
  for (size_t k = 0; k < count; ++k) order.push_back((round + k) % count);
  return order;
}

v1::BenchmarkSettings SampleSettings(const v1::BenchmarkSettings& spec) {
  v1::BenchmarkSettings sample = spec;
  sample.set_warmup_ms(0);  // RepeatRuns still warms up with one run
  sample.set_min_time_ms(spec.min_time_ms() * kAlternationTimeFactor / kAlternationRounds);
  sample.set_min_repeats(1);
  return sample;
}

std::vector<Result<v1::TimingStats>> TimeInAlternation(
    size_t count, int rounds, const std::function<Result<v1::TimingStats>(size_t)>& sample) {
  std::vector<std::vector<double>> medians(count);
  std::vector<v1::TimingStats> last(count);
  std::vector<std::optional<Status>> dropped(count);
  for (int round = 0; round < rounds; ++round) {
    for (size_t i : RoundOrder(count, static_cast<size_t>(round))) {
      if (dropped[i]) continue;
      Result<v1::TimingStats> timed = sample(i);
      if (!timed.ok()) {
        dropped[i] = timed.status();
        continue;
      }
      medians[i].push_back(timed->median_ns());
      last[i] = *timed;
    }
  }
  std::vector<Result<v1::TimingStats>> out;
  for (size_t i = 0; i < count; ++i) {
    if (dropped[i]) {
      out.emplace_back(*dropped[i]);
      continue;
    }
    v1::TimingStats stats = SummarizeRunTimes(medians[i]);
    stats.set_core_clock_mhz(last[i].core_clock_mhz());
    stats.set_temperature_c(last[i].temperature_c());
    out.emplace_back(std::move(stats));
  }
  return out;
}

}  // namespace tf::runner
