// `tunefleet space SPEC`: how many configurations each problem's constrained
// space holds, and the first few, without building anything: a large space is
// seen, and its constraints checked, before any compiler runs. A space too
// large to count in --max-seconds gets a lower bound, said to be one.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <set>

#include "client/cli/cli_util.h"
#include "client/cli/commands.h"
#include "client/cli/spec_space.h"
#include "kernelspec/config.h"
#include "kernelspec/spec_loader.h"
#include "kernelspec/validate.h"
#include "vendors/toolchains.h"

namespace tf::cli {

namespace {

// Distinct configurations over several problems are told apart by key, in
// memory: above this many in all, only a lower bound is given.
constexpr uint64_t kMaxDistinct = 10'000'000;

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The count of one problem's valid configurations, with progress on stderr
// once it takes a while, stopped after --max-seconds (never when it is 0).
class Counting {
 public:
  Counting(double max_seconds, Clock::time_point start)
      : max_seconds_(max_seconds), start_(start) {}

  bool TimeLeft() const { return max_seconds_ <= 0 || SecondsSince(start_) < max_seconds_; }

  kernelspec::SearchSpace::KeepGoing Progress(const std::string& problem, uint64_t cartesian) {
    return [=, this](uint64_t found, double walked) {
      const double now = SecondsSince(start_);
      if (now >= next_report_s_) {
        if (!announced_) {
          std::fprintf(stderr, "counting the valid configurations of %llu combinations%s\n",
                       static_cast<unsigned long long>(cartesian),
                       max_seconds_ > 0 ? " (stopping at --max-seconds)" : "");
          announced_ = true;
        }
        std::fprintf(stderr, "problem %s: %llu valid so far, %.2f%% walked, %.0f s\n",
                     problem.c_str(), static_cast<unsigned long long>(found), walked * 100, now);
        next_report_s_ = now + 2;
      }
      walked_ = walked;
      return TimeLeft();
    };
  }

  double walked() const { return walked_; }
  double elapsed() const { return SecondsSince(start_); }

 private:
  double max_seconds_;
  Clock::time_point start_;
  double next_report_s_ = 1;
  bool announced_ = false;
  double walked_ = 0;
};

}  // namespace

int RunSpace(const GlobalOptions& global, const SpaceOptions& options) {
  const Clock::time_point start = Clock::now();
  Result<kernelspec::LoadedSpec> loaded = kernelspec::LoadSpecFile(options.spec_path);
  if (!loaded.ok()) return FailUsage(loaded.status());
  v1::KernelSpec& spec = loaded->spec;
  if (Status valid = kernelspec::ValidateSpec(spec, loaded->sources, kernelspec::SpecLimits());
      !valid.ok()) {
    return FailSpec(*loaded, valid);
  }
  if (Status target = vendors::CompleteTarget(&spec); !target.ok()) {
    return FailSpec(*loaded, target);
  }
  Result<kernelspec::DeviceProperties> props = TargetProperties(spec, options.device_props);
  if (!props.ok()) return FailUsage(props.status());

  Counting counting(options.max_seconds, start);
  client::Json problems = client::Json::array();
  std::vector<kernelspec::SearchSpace> spaces;
  bool complete = true;
  uint64_t most = 0, total = 0;  // of the problems' counts
  for (const v1::Problem& problem : spec.problems()) {
    Result<kernelspec::SearchSpace> space = ProblemSpace(spec, problem, *props);
    if (!space.ok()) return FailSpec(*loaded, space.status());
    const std::string text = kernelspec::ProblemText(problem);
    bool counted_all = false;
    const uint64_t count =
        space->CountValid(counting.Progress(text, space->CartesianSize()), &counted_all);
    client::Json shown = client::Json::array();
    if (options.show > 0) {
      space->EnumerateIndices(
          [&](const uint32_t* index) {
            shown.push_back(client::ConfigJson(space->MakeConfig(index)));
            return static_cast<int>(shown.size()) < options.show;
          },
          counting.Progress(text, space->CartesianSize()));
    }
    client::Json entry = {{"problem", client::ProblemJson(problem)},
                          {"cartesian", space->CartesianSize()},
                          {"complete", counted_all}};
    if (counted_all) {
      entry["configurations"] = count;
    } else {
      entry["configurations_at_least"] = count;
      entry["walked"] = counting.walked();
      entry["stopped_after_s"] = counting.elapsed();
    }
    entry["first"] = std::move(shown);
    problems.push_back(std::move(entry));
    complete &= counted_all;
    most = std::max(most, count);
    total = total > UINT64_MAX - count ? UINT64_MAX : total + count;
    spaces.push_back(std::move(space).value());
  }

  // Over several problems, configurations the problems share count once.
  uint64_t configurations = most;
  if (spec.problems_size() > 1 && complete && total <= kMaxDistinct) {
    std::set<std::string> distinct;
    for (const kernelspec::SearchSpace& space : spaces) {
      complete &= space.EnumerateIndices(
          [&](const uint32_t* index) {
            distinct.insert(kernelspec::ConfigKey(space.MakeConfig(index)));
            return true;
          },
          counting.Progress("(all, told apart)", space.CartesianSize()));
    }
    configurations = std::max<uint64_t>(most, distinct.size());
  } else if (spec.problems_size() > 1) {
    complete = false;  // at least the largest problem's
  }

  if (global.json) {
    client::Json out = {{"kernel", spec.name()}, {"complete", complete}};
    out[complete ? "configurations" : "configurations_at_least"] = configurations;
    out["problems"] = std::move(problems);
    PrintJson(out);
    return kExitOk;
  }
  std::printf("%s: %s%llu configurations\n", spec.name().c_str(), complete ? "" : "at least ",
              static_cast<unsigned long long>(configurations));
  for (const client::Json& problem : problems) {
    const bool all = problem["complete"].get<bool>();
    std::printf("problem %s: %s%llu of %llu in the cartesian product satisfy the constraints",
                problem["problem"].dump().c_str(), all ? "" : "at least ",
                static_cast<unsigned long long>(
                    problem[all ? "configurations" : "configurations_at_least"].get<uint64_t>()),
                static_cast<unsigned long long>(problem["cartesian"].get<uint64_t>()));
    if (!all) {
      std::printf(
          " (counting stopped after %.1f s with %.2f%% of the product walked; "
          "--max-seconds 0 counts them all)",
          problem["stopped_after_s"].get<double>(), problem["walked"].get<double>() * 100);
    }
    std::printf("\n");
    for (const client::Json& config : problem["first"]) {
      std::printf("  %s\n", config.dump().c_str());
    }
  }
  return kExitOk;
}

}  // namespace tf::cli
