#include "search/evaluate.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "search/strategy.h"

namespace tf::search {

namespace {

struct Run {
  std::vector<double> fraction;
  double strategy_ms = 0;
  uint64_t proposals = 0;
};

// CPU time of this thread: the strategy's own cost, whatever else the machine
// is running.
double ThreadMs() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

// One problem of a job under way.
struct Problem {
  const RecordedSpace* recorded = nullptr;
  double optimum = 0;
  std::unique_ptr<Strategy> strategy;
  const std::vector<ConfigId>* warm = nullptr;
  size_t next_warm = 0;
  std::deque<ConfigId> shared;  // the other problems' bests, to propose next
  std::vector<bool> proposed;
  double best = INFINITY;
  Run run;
};

// One seed's run of a job: each problem in turn asks `batch` configurations
// (its warm start's first, told with TellSeed, then the other problems' bests,
// then its strategy's) until it has `evaluations` (fewer when its space is
// smaller) or its strategy stops. With `share` and a strategy that learns, a
// problem's new best goes to every other problem whose space holds it, as the
// coordinator's SearchDriver does; `ids[i]` maps keys to problem i's
// configurations.
void RunJob(std::vector<Problem>& problems, uint64_t evaluations, size_t batch, bool share,
            const std::vector<std::map<std::string, ConfigId>>& ids) {
  std::vector<bool> done(problems.size(), false);
  while (std::find(done.begin(), done.end(), false) != done.end()) {
    for (size_t i = 0; i < problems.size(); ++i) {
      Problem& p = problems[i];
      const uint64_t limit = std::min<uint64_t>(evaluations, p.recorded->space.size());
      if (done[i] || p.run.fraction.size() >= limit) {
        done[i] = true;
        continue;
      }
      const size_t want = std::min<uint64_t>(batch, limit - p.run.fraction.size());
      std::vector<ConfigId> ask;
      for (; ask.size() < want && p.next_warm < p.warm->size(); ++p.next_warm) {
        const ConfigId id = (*p.warm)[p.next_warm];
        if (!p.proposed[id]) ask.push_back(id);
        p.proposed[id] = true;
      }
      const size_t seeded = ask.size();  // the first `seeded` are the warm start's
      for (; ask.size() < want && !p.shared.empty(); p.shared.pop_front()) {
        if (!p.proposed[p.shared.front()]) ask.push_back(p.shared.front());
        p.proposed[p.shared.front()] = true;
      }
      // The strategy fills the rest; what it proposes among those already
      // proposed is passed over, as SearchDriver does.
      while (ask.size() < want) {
        const double start = ThreadMs();
        std::vector<ConfigId> more = p.strategy->Ask(want - ask.size());
        p.run.strategy_ms += ThreadMs() - start;
        p.run.proposals += more.size();
        for (ConfigId id : more) {
          if (!p.proposed[id]) ask.push_back(id);
          p.proposed[id] = true;
        }
        if (more.empty()) break;
      }
      if (ask.empty()) done[i] = true;
      for (size_t k = 0; k < ask.size(); ++k) {
        const ConfigId id = ask[k];
        std::optional<double> time = RecordedTime(*p.recorded, id);
        const bool improved = time && *time < p.best;
        if (improved) p.best = *time;
        p.run.fraction.push_back(std::isfinite(p.best) ? p.optimum / p.best : 0);
        const double start = ThreadMs();
        if (k < seeded) {
          p.strategy->TellSeed(id, time);
        } else {
          p.strategy->Tell(id, time);
        }
        p.run.strategy_ms += ThreadMs() - start;
        if (!improved || !share || !p.strategy->Adaptive()) continue;
        const std::string key = p.recorded->space.Key(id);
        for (size_t j = 0; j < problems.size(); ++j) {
          auto same = ids[j].find(key);
          if (j != i && same != ids[j].end()) problems[j].shared.push_back(same->second);
        }
      }
    }
  }
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
  TF_ASSIGN_OR_RETURN(std::vector<Evaluation> job,
                      EvaluateJob({&recorded}, name, budget, seeds, first_seed, batch, threads,
                                  {warm}, /*share=*/false));
  return std::move(job[0]);
}

Result<std::vector<Evaluation>> EvaluateJob(const std::vector<const RecordedSpace*>& spaces,
                                            const std::string& name, uint64_t budget, int seeds,
                                            uint64_t first_seed, size_t batch, int threads,
                                            const std::vector<std::vector<ConfigId>>& warm,
                                            bool share) {
  std::vector<double> optimum;
  std::vector<std::map<std::string, ConfigId>> ids(share ? spaces.size() : 0);
  for (size_t i = 0; i < spaces.size(); ++i) {
    TF_ASSIGN_OR_RETURN(optimum.emplace_back(), Optimum(*spaces[i]));
    // Fails here, once, for an unknown name.
    TF_RETURN_IF_ERROR(MakeStrategy(name, spaces[i]->space, {}).status());
    for (ConfigId id = 0; share && id < spaces[i]->space.size(); ++id) {
      ids[i][spaces[i]->space.Key(id)] = id;
    }
  }
  const std::vector<ConfigId> cold;
  std::vector<std::vector<Run>> runs(seeds);  // runs[seed][problem]
  auto work = [&](int worker) {
    for (int s = worker; s < seeds; s += threads) {
      std::vector<Problem> problems;
      for (size_t i = 0; i < spaces.size(); ++i) {
        auto strategy =
            MakeStrategy(name, spaces[i]->space,
                         {.seed = first_seed + static_cast<uint64_t>(s), .budget = budget});
        Problem& p = problems.emplace_back();
        p.recorded = spaces[i];
        p.optimum = optimum[i];
        p.strategy = std::move(strategy).value();
        p.warm = i < warm.size() ? &warm[i] : &cold;
        p.proposed.assign(spaces[i]->space.size(), false);
      }
      RunJob(problems, budget, batch, share, ids);
      for (Problem& p : problems) runs[s].push_back(std::move(p.run));
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work, t);
  work(0);
  for (std::thread& t : pool) t.join();

  std::vector<Evaluation> evaluations(spaces.size());
  for (size_t i = 0; i < spaces.size(); ++i) {
    Evaluation& evaluation = evaluations[i];
    const uint64_t length = std::min<uint64_t>(budget, spaces[i]->space.size());
    evaluation.fraction.assign(length, 0);
    for (const std::vector<Run>& job : runs) {
      const Run& run = job[i];
      for (uint64_t b = 0; b < length; ++b) {
        // A strategy that stopped early keeps its last best.
        double f =
            run.fraction.empty() ? 0 : run.fraction[std::min<size_t>(b, run.fraction.size() - 1)];
        evaluation.fraction[b] += f / seeds;
      }
      evaluation.final_fraction.push_back(run.fraction.empty() ? 0 : run.fraction.back());
      evaluation.strategy_ms += run.strategy_ms;
      evaluation.proposals += run.proposals;
    }
  }
  return evaluations;
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
