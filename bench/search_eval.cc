// Evaluates a search strategy on recorded spaces: each file's recorded
// configurations are the space, the strategy runs once per seed for the
// budget, and the best time it finds is compared with the optimum and with
// random sampling without replacement at the same budget.
//
//   search_eval --space A100_T4.json.gz --space W6600_T4.json.gz
//       --strategy bayes --budget 100 --json
//
// With --warm-from, each run starts from a warm start transferred from the
// other recorded runs of the kernel (search/transfer.h), as the coordinator
// seeds a job from other device classes' results. With --joint, the spaces
// are the problems of one job, searched together and sharing their bests.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/flag_checks.h"
#include "search/evaluate.h"
#include "search/strategy.h"
#include "search/transfer.h"

namespace {

bool SameFile(const std::string& a, const std::string& b) {
  std::error_code error;
  return std::filesystem::equivalent(a, b, error);
}

// What a tuning run of `recorded` leaves in the database: every recorded
// configuration, or with `budget` > 0 those `auto` evaluates in that many
// evaluations (seed 1), as a job on that device would.
std::vector<tf::search::KeyedResult> SourceResults(const tf::search::RecordedSpace& recorded,
                                                   uint64_t budget) {
  auto time_of = [&](tf::search::ConfigId id) { return tf::search::RecordedTime(recorded, id); };
  std::vector<tf::search::KeyedResult> results;
  if (budget == 0) {
    for (tf::search::ConfigId id = 0; id < recorded.space.size(); ++id) {
      results.emplace_back(recorded.space.Key(id), time_of(id));
    }
    return results;
  }
  auto strategy = tf::search::MakeStrategy("auto", recorded.space, {.seed = 1, .budget = budget});
  while (results.size() < budget) {
    std::vector<tf::search::ConfigId> ask = (*strategy)->Ask(1);
    if (ask.empty()) break;
    results.emplace_back(recorded.space.Key(ask[0]), time_of(ask[0]));
    (*strategy)->Tell(ask[0], time_of(ask[0]));
  }
  return results;
}

// The warm start of `target`: the configurations WarmStartRanking picks from
// the other spaces' results (`results[i]`: SourceResults of `from[i]`), those
// in the target's space.
std::vector<tf::search::ConfigId> WarmStart(
    const tf::search::RecordedSpace& target, const std::vector<tf::search::RecordedSpace>& from,
    const std::vector<std::vector<tf::search::KeyedResult>>& results, size_t count) {
  std::vector<std::vector<tf::search::KeyedResult>> sources;
  for (size_t i = 0; i < from.size(); ++i) {
    if (!SameFile(from[i].path, target.path)) sources.push_back(results[i]);
  }
  std::map<std::string, tf::search::ConfigId> ids;
  for (tf::search::ConfigId id = 0; id < target.space.size(); ++id) {
    ids[target.space.Key(id)] = id;
  }
  std::vector<tf::search::ConfigId> warm;
  for (const std::string& key : tf::search::WarmStartRanking(sources).Rank(count)) {
    auto it = ids.find(key);
    if (it != ids.end()) warm.push_back(it->second);
  }
  return warm;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> files;
  std::string strategy;
  uint64_t budget = 0;
  int seeds = 20;
  uint64_t first_seed = 1;
  size_t batch = 1;
  int threads = 1;
  bool json = false;
  std::vector<std::string> warm_files;
  size_t warm_count = tf::search::kWarmStartConfigs;
  uint64_t warm_budget = 0;
  bool joint = false;
  std::string names;
  for (const std::string& n : tf::search::StrategyNames()) names += (names.empty() ? "" : ", ") + n;

  CLI::App app{
      "Evaluates a search strategy on recorded spaces (Kernel Tuner cache files or T4 result "
      "files, gzip or not). Prints, per space and averaged, the fraction of the optimum the "
      "strategy reaches in the budget (optimum time / best time found, mean over seeds), the "
      "same for random sampling without replacement (its exact expectation), and Kernel Tuner's "
      "methodology score (Willemsen et al.): the mean over the budget of (f_strategy - f_random) "
      "/ (1 - f_random). Failed configurations count as evaluations. Per space, the standard error "
      "of the fraction over the seeds and how many seeds ended at the optimum: runs tend to end "
      "either there or in another basin well below it, so compare strategies by more than the "
      "mean.",
      "search_eval"};
  app.add_option("--space", files, "recorded space file (repeatable)")->required();
  app.add_option("--strategy", strategy, "one of: " + names)->required();
  app.add_option("--budget", budget, "evaluations per run")->required()->check(tf::kPositive);
  app.add_option("--seeds", seeds, "runs per space, seeds 1..K")
      ->capture_default_str()
      ->check(tf::kPositive);
  app.add_option("--batch", batch, "configurations asked at a time (free devices)")
      ->capture_default_str()
      ->check(tf::kPositive);
  app.add_option("--threads", threads, "seeds run in parallel")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  app.add_option("--warm-from", warm_files,
                 "recorded space of the same kernel on another device or problem (repeatable): "
                 "each run starts with --warm-count configurations ranked by their mean fraction "
                 "of each of these spaces' optimum (a file that is the --space itself is left "
                 "out, so the same files as --space and --warm-from is leave-one-out). They are "
                 "evaluated first and count as evaluations; the random baseline stays cold. The "
                 "JSON adds warm_from, warm_count and warm_budget, and per space warm_seeds "
                 "(configurations seeded) and warm_fraction_of_optimum (the best of them)");
  app.add_option("--warm-count", warm_count, "configurations seeded with --warm-from")
      ->capture_default_str();
  app.add_option("--warm-budget", warm_budget,
                 "rank from only what auto evaluates on each --warm-from space in this many "
                 "evaluations (seed 1), as a job there leaves in the database; 0: every recorded "
                 "configuration")
      ->capture_default_str();
  app.add_flag("--joint", joint,
               "search the --space files together as the problems of one job (one device, "
               "several problem sizes), each with its own strategy and budget: a problem's new "
               "best is proposed next to the others whose spaces hold it, as the coordinator "
               "does. The JSON adds joint: true");
  app.add_flag("--json", json, "print one JSON object");
  CLI11_PARSE(app, argc, argv);
  // Before any file is read: a large one takes seconds.
  if (tf::Status known = tf::search::CheckStrategyName(strategy); !known.ok()) {
    std::fprintf(stderr, "search_eval: %s\n", known.message().c_str());
    return 2;
  }

  // Every file read, or the first error printed.
  auto read_all = [](const std::vector<std::string>& paths,
                     std::vector<tf::search::RecordedSpace>& out) {
    for (const std::string& file : paths) {
      auto recorded = tf::search::ReadRecordedSpace(file);
      if (!recorded.ok()) {
        std::fprintf(stderr, "search_eval: %s\n", recorded.status().message().c_str());
        return false;
      }
      out.push_back(std::move(*recorded));
    }
    return true;
  };
  std::vector<tf::search::RecordedSpace> spaces, warm_from;
  if (!read_all(files, spaces) || !read_all(warm_files, warm_from)) return 2;
  std::vector<std::vector<tf::search::KeyedResult>> warm_results;
  for (const tf::search::RecordedSpace& source : warm_from) {
    warm_results.push_back(SourceResults(source, warm_budget));
  }

  nlohmann::ordered_json out;
  out["strategy"] = strategy;
  out["budget"] = budget;
  out["seeds"] = seeds;
  if (joint) out["joint"] = true;
  if (!warm_from.empty()) {
    out["warm_from"] = warm_files;
    out["warm_count"] = warm_count;
    out["warm_budget"] = warm_budget;
  }
  out["spaces"] = nlohmann::ordered_json::array();
  double sum_fraction = 0, sum_variance = 0, sum_random = 0, sum_score = 0, strategy_ms = 0;
  uint64_t proposals = 0;
  std::vector<std::vector<tf::search::ConfigId>> warm;
  for (const tf::search::RecordedSpace& recorded : spaces) {
    warm.push_back(warm_from.empty() ? std::vector<tf::search::ConfigId>{}
                                     : WarmStart(recorded, warm_from, warm_results, warm_count));
  }
  // Each space alone, or (--joint) all of them as the problems of one job.
  std::vector<std::vector<size_t>> jobs;
  for (size_t i = 0; i < spaces.size(); ++i) {
    if (!joint || i == 0) jobs.emplace_back();
    jobs.back().push_back(i);
  }
  std::vector<tf::search::Evaluation> evaluations;
  for (const std::vector<size_t>& job : jobs) {
    std::vector<const tf::search::RecordedSpace*> problems;
    std::vector<std::vector<tf::search::ConfigId>> job_warm;
    for (size_t i : job) {
      problems.push_back(&spaces[i]);
      job_warm.push_back(warm[i]);
    }
    auto evaluated = tf::search::EvaluateJob(problems, strategy, budget, seeds, first_seed, batch,
                                             threads, job_warm, joint);
    if (!evaluated.ok()) {
      std::fprintf(stderr, "search_eval: %s\n", evaluated.status().message().c_str());
      return 2;
    }
    for (tf::search::Evaluation& e : *evaluated) evaluations.push_back(std::move(e));
  }
  for (size_t i = 0; i < spaces.size(); ++i) {
    const tf::search::RecordedSpace& recorded = spaces[i];
    const tf::search::Evaluation& evaluation = evaluations[i];
    std::vector<double> random = tf::search::RandomFractionCurve(recorded, budget);
    const double fraction = evaluation.fraction.back();
    const double stderr_fraction = tf::search::StandardError(evaluation.final_fraction);
    const auto at_optimum =
        std::count_if(evaluation.final_fraction.begin(), evaluation.final_fraction.end(),
                      [](double f) { return f >= 1 - 1e-9; });
    const double score = tf::search::MethodologyScore(evaluation.fraction, random);
    const double ms_per_proposal =
        evaluation.proposals ? evaluation.strategy_ms / evaluation.proposals : 0;
    out["spaces"].push_back({
        {"file", recorded.path},
        {"configurations", recorded.space.size()},
        {"optimum", *tf::search::Optimum(recorded)},
        {"fraction_of_optimum", fraction},
        {"fraction_of_optimum_stderr", stderr_fraction},
        {"seeds_at_optimum", at_optimum},
        {"random_fraction_of_optimum", random.back()},
        {"methodology_score", score},
        {"ms_per_proposal", ms_per_proposal},
    });
    if (!warm_from.empty()) {
      double warm_best = INFINITY;
      for (tf::search::ConfigId id : warm[i]) {
        if (auto time = tf::search::RecordedTime(recorded, id))
          warm_best = std::min(warm_best, *time);
      }
      out["spaces"].back()["warm_seeds"] = warm[i].size();
      out["spaces"].back()["warm_fraction_of_optimum"] =
          std::isfinite(warm_best) ? *tf::search::Optimum(recorded) / warm_best : 0;
    }
    sum_fraction += fraction;
    sum_variance += stderr_fraction * stderr_fraction;
    sum_random += random.back();
    sum_score += score;
    strategy_ms += evaluation.strategy_ms;
    proposals += evaluation.proposals;
  }
  const double n = spaces.size();
  out["mean_fraction_of_optimum"] = sum_fraction / n;
  // The spaces' seeds are independent: the variances of their means add.
  out["mean_fraction_of_optimum_stderr"] = std::sqrt(sum_variance) / n;
  out["mean_random_fraction_of_optimum"] = sum_random / n;
  out["methodology_score"] = sum_score / n;
  out["mean_ms_per_proposal"] = proposals ? strategy_ms / proposals : 0;

  if (json) {
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  std::printf("%s, budget %llu, %d seeds\n", strategy.c_str(),
              static_cast<unsigned long long>(budget), seeds);
  std::printf("%-50s %8s %9s %7s %8s %8s %8s %8s\n", "space", "configs", "strategy", "stderr",
              "at opt", "random", "score", "ms/prop");
  for (const auto& s : out["spaces"]) {
    std::printf("%-50s %8llu %9.3f %7.3f %5d/%-2d %8.3f %8.3f %8.3f\n",
                s["file"].get<std::string>().c_str(),
                static_cast<unsigned long long>(s["configurations"].get<uint64_t>()),
                s["fraction_of_optimum"].get<double>(),
                s["fraction_of_optimum_stderr"].get<double>(), s["seeds_at_optimum"].get<int>(),
                seeds, s["random_fraction_of_optimum"].get<double>(),
                s["methodology_score"].get<double>(), s["ms_per_proposal"].get<double>());
  }
  std::printf("%-50s %8s %9.3f %7.3f %8s %8.3f %8.3f %8.3f\n", "mean", "", sum_fraction / n,
              out["mean_fraction_of_optimum_stderr"].get<double>(), "", sum_random / n,
              sum_score / n, out["mean_ms_per_proposal"].get<double>());
  return 0;
}
