#include "search/evaluate.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <thread>

#include "search/strategy.h"

namespace tf::search {

namespace {

struct Run {
  std::vector<double> fraction;
  double strategy_ms = 0;
  uint64_t proposals = 0;
};

Run RunOnce(const RecordedSpace& recorded, Strategy& strategy, uint64_t evaluations, size_t batch,
            double optimum, const std::vector<ConfigId>& warm) {
  Run run;
  double best = INFINITY;
  std::vector<bool> proposed(recorded.space.size(), false);
  size_t next_warm = 0;
  // CPU time of this thread: the strategy's own cost, whatever else the
  // machine is running.
  auto now_ms = [] {
    timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
  };
  auto elapsed_ms = [&](double start) { return now_ms() - start; };
  while (run.fraction.size() < evaluations) {
    const size_t want = std::min<uint64_t>(batch, evaluations - run.fraction.size());
    std::vector<ConfigId> ask;
    for (; ask.size() < want && next_warm < warm.size(); ++next_warm) {
      if (!proposed[warm[next_warm]]) ask.push_back(warm[next_warm]);
      proposed[warm[next_warm]] = true;
    }
    const size_t seeded = ask.size();  // the first `seeded` are the warm start's
    // The strategy fills the rest; what it proposes among the warm start not
    // yet told is passed over, as SearchDriver does.
    while (ask.size() < want) {
      double start = now_ms();
      std::vector<ConfigId> more = strategy.Ask(want - ask.size());
      run.strategy_ms += elapsed_ms(start);
      run.proposals += more.size();
      for (ConfigId id : more) {
        if (!proposed[id]) ask.push_back(id);
        proposed[id] = true;
      }
      if (more.empty()) break;
    }
    if (ask.empty()) break;
    for (size_t i = 0; i < ask.size(); ++i) {
      const ConfigId id = ask[i];
      std::optional<double> time = RecordedTime(recorded, id);
      if (time) best = std::min(best, *time);
      run.fraction.push_back(std::isfinite(best) ? optimum / best : 0);
      const double start = now_ms();
      if (i < seeded) {
        strategy.TellSeed(id, time);
      } else {
        strategy.Tell(id, time);
      }
      run.strategy_ms += elapsed_ms(start);
    }
  }
  return run;
}

}  // namespace

std::optional<double> RecordedTime(const RecordedSpace& recorded, ConfigId id) {
  const RecordedResult& r = recorded.results[id];
  if (r.outcome != Outcome::kOk) return std::nullopt;
  return r.time_ms;
}

Result<double> Optimum(const RecordedSpace& recorded) {
  double best = INFINITY;
  for (const RecordedResult& r : recorded.results) {
    if (r.outcome == Outcome::kOk) best = std::min(best, r.time_ms);
  }
  if (!std::isfinite(best) || best <= 0) {
    return Status::InvalidArgument(recorded.path + ": no configuration succeeded with a time > 0");
  }
  return best;
}

Result<Evaluation> EvaluateStrategy(const RecordedSpace& recorded, const std::string& name,
                                    uint64_t budget, int seeds, uint64_t first_seed, size_t batch,
                                    int threads, const std::vector<ConfigId>& warm) {
  TF_ASSIGN_OR_RETURN(double optimum, Optimum(recorded));
  const uint64_t evaluations = std::min<uint64_t>(budget, recorded.space.size());
  // Fails here, once, for an unknown name.
  TF_RETURN_IF_ERROR(MakeStrategy(name, recorded.space, {}).status());
  std::vector<Run> runs(seeds);
  auto work = [&](int worker) {
    for (int s = worker; s < seeds; s += threads) {
      auto strategy = MakeStrategy(
          name, recorded.space, {.seed = first_seed + static_cast<uint64_t>(s), .budget = budget});
      runs[s] = RunOnce(recorded, **strategy, evaluations, batch, optimum, warm);
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work, t);
  work(0);
  for (std::thread& t : pool) t.join();

  Evaluation evaluation;
  evaluation.fraction.assign(evaluations, 0);
  for (const Run& run : runs) {
    for (uint64_t b = 0; b < evaluations; ++b) {
      // A strategy that stopped early keeps its last best.
      double f =
          run.fraction.empty() ? 0 : run.fraction[std::min<size_t>(b, run.fraction.size() - 1)];
      evaluation.fraction[b] += f / seeds;
    }
    evaluation.final_fraction.push_back(run.fraction.empty() ? 0 : run.fraction.back());
    evaluation.strategy_ms += run.strategy_ms;
    evaluation.proposals += run.proposals;
  }
  return evaluation;
}

double StandardError(const std::vector<double>& values) {
  const size_t n = values.size();
  if (n < 2) return 0;
  double mean = 0, squares = 0;
  for (double v : values) mean += v / n;
  for (double v : values) squares += (v - mean) * (v - mean);
  return std::sqrt(squares / (n - 1) / n);
}

std::vector<double> RandomFractionCurve(const RecordedSpace& recorded, uint64_t budget) {
  const double n = recorded.space.size();
  std::vector<double> times;
  for (const RecordedResult& r : recorded.results) {
    if (r.outcome == Outcome::kOk) times.push_back(r.time_ms);
  }
  std::sort(times.begin(), times.end());
  const uint64_t evaluations = std::min<uint64_t>(budget, recorded.space.size());
  std::vector<double> curve(evaluations);
  for (uint64_t b = 1; b <= evaluations; ++b) {
    // P(the i-th fastest is the best of b draws) = C(n-i, b-1) / C(n, b);
    // from i to i+1 it shrinks by (n-i-b+1) / (n-i).
    double p = b / n, expected = 0;
    for (size_t i = 1; i <= times.size() && p > 0; ++i) {
      expected += p * times[0] / times[i - 1];
      if (i < n) p *= std::max(0.0, n - i - b + 1) / (n - i);
    }
    curve[b - 1] = expected;
  }
  return curve;
}

double MethodologyScore(const std::vector<double>& strategy, const std::vector<double>& random) {
  double sum = 0;
  int points = 0;
  for (size_t b = 0; b < std::min(strategy.size(), random.size()); ++b) {
    if (1 - random[b] < 1e-12) continue;
    sum += (strategy[b] - random[b]) / (1 - random[b]);
    ++points;
  }
  return points ? sum / points : 0;
}

}  // namespace tf::search
