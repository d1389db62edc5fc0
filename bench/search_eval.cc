// Evaluates a search strategy on recorded spaces: each file's recorded
// configurations are the space, the strategy runs once per seed for the
// budget, and the best time it finds is compared with the optimum and with
// random sampling without replacement at the same budget.
//
//   search_eval --space A100_T4.json.gz --space W6600_T4.json.gz
//       --strategy bayes --budget 100 --json
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <thread>

#include "search/evaluate.h"
#include "search/strategy.h"

int main(int argc, char** argv) {
  std::vector<std::string> files;
  std::string strategy;
  uint64_t budget = 0;
  int seeds = 20;
  uint64_t first_seed = 1;
  size_t batch = 1;
  int threads = 1;
  bool json = false;
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
  app.add_option("--budget", budget, "evaluations per run")->required()->check(CLI::PositiveNumber);
  app.add_option("--seeds", seeds, "runs per space, seeds 1..K")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--batch", batch, "configurations asked at a time (free devices)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--threads", threads, "seeds run in parallel")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  app.add_flag("--json", json, "print one JSON object");
  CLI11_PARSE(app, argc, argv);

  std::vector<tf::search::RecordedSpace> spaces;
  for (const std::string& file : files) {
    auto recorded = tf::search::ReadRecordedSpace(file);
    if (!recorded.ok()) {
      std::fprintf(stderr, "search_eval: %s\n", recorded.status().message().c_str());
      return 2;
    }
    spaces.push_back(std::move(*recorded));
  }

  nlohmann::ordered_json out;
  out["strategy"] = strategy;
  out["budget"] = budget;
  out["seeds"] = seeds;
  out["spaces"] = nlohmann::ordered_json::array();
  double sum_fraction = 0, sum_variance = 0, sum_random = 0, sum_score = 0, strategy_ms = 0;
  uint64_t proposals = 0;
  for (const tf::search::RecordedSpace& recorded : spaces) {
    auto evaluation =
        tf::search::EvaluateStrategy(recorded, strategy, budget, seeds, first_seed, batch, threads);
    if (!evaluation.ok()) {
      std::fprintf(stderr, "search_eval: %s\n", evaluation.status().message().c_str());
      return 2;
    }
    std::vector<double> random = tf::search::RandomFractionCurve(recorded, budget);
    const double fraction = evaluation->fraction.back();
    const double stderr_fraction = tf::search::StandardError(evaluation->final_fraction);
    const auto at_optimum =
        std::count_if(evaluation->final_fraction.begin(), evaluation->final_fraction.end(),
                      [](double f) { return f >= 1 - 1e-9; });
    const double score = tf::search::MethodologyScore(evaluation->fraction, random);
    const double ms_per_proposal =
        evaluation->proposals ? evaluation->strategy_ms / evaluation->proposals : 0;
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
    sum_fraction += fraction;
    sum_variance += stderr_fraction * stderr_fraction;
    sum_random += random.back();
    sum_score += score;
    strategy_ms += evaluation->strategy_ms;
    proposals += evaluation->proposals;
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
