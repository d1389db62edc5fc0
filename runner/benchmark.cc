#include "runner/benchmark.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <thread>

namespace tf::runner {
namespace {

using Clock = std::chrono::steady_clock;

// Cap on the flush buffer. Some CPUs report the L3 of the whole socket (an AMD
// EPYC reports every CCD's slice together); a core only uses its own slice.
constexpr int64_t kMaxFlushBytes = 64 << 20;
// Caps runs when the spec sets no max_repeats.
constexpr int kDefaultMaxRepeats = 100000;

double Since(Clock::time_point start) {
  return std::chrono::duration<double, std::nano>(Clock::now() - start).count();
}

// Linear interpolation between the closest ranks of sorted samples.
double Percentile(const std::vector<double>& sorted, double q) {
  double pos = q * (sorted.size() - 1);
  size_t below = static_cast<size_t>(std::floor(pos));
  size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (sorted[above] - sorted[below]) * (pos - below);
}

}  // namespace

CacheFlusher::CacheFlusher(int64_t last_level_cache_bytes)
    : buffer_(std::clamp<int64_t>(2 * last_level_cache_bytes, 1 << 20, kMaxFlushBytes)) {}

int64_t GpuFlushBytes(int64_t l2_bytes) { return 2 * std::max<int64_t>(l2_bytes, 1 << 20); }

void CacheFlusher::Flush() {
  // Writing (not only reading) also evicts dirty lines of the kernel's outputs.
  for (size_t i = 0; i < buffer_.size(); i += 64) buffer_[i]++;
  asm volatile("" : : "r"(buffer_.data()) : "memory");
}

v1::TimingStats SummarizeRunTimes(std::vector<double> run_ns) {
  v1::TimingStats stats;
  if (run_ns.empty()) return stats;
  std::sort(run_ns.begin(), run_ns.end());
  stats.set_median_ns(Percentile(run_ns, 0.5));
  stats.set_p10_ns(Percentile(run_ns, 0.1));
  stats.set_p90_ns(Percentile(run_ns, 0.9));
  stats.set_min_ns(run_ns.front());
  stats.set_mean_ns(std::accumulate(run_ns.begin(), run_ns.end(), 0.0) / run_ns.size());
  stats.set_repeats(static_cast<int>(run_ns.size()));
  return stats;
}

void SleepFor(std::chrono::nanoseconds duration) { std::this_thread::sleep_for(duration); }

Result<v1::TimingStats> RepeatRuns(const std::function<Result<double>()>& warm_up,
                                   const std::function<Result<double>()>& timed_run,
                                   const v1::BenchmarkSettings& settings,
                                   const std::function<void(std::chrono::nanoseconds)>& rest) {
  auto rest_after = [&](double run_ns) {
    if (settings.rest() > 0) {
      rest(std::chrono::nanoseconds(static_cast<int64_t>(settings.rest() * run_ns)));
    }
  };
  const auto warmup_start = Clock::now();
  do {
    TF_ASSIGN_OR_RETURN(double ns, warm_up());
    rest_after(ns);
  } while (Since(warmup_start) < settings.warmup_ms() * 1e6);

  const int max_repeats = settings.max_repeats() > 0 ? settings.max_repeats() : kDefaultMaxRepeats;
  const int min_repeats = std::min(std::max(settings.min_repeats(), 1), max_repeats);
  std::vector<double> run_ns;
  // The minimum time counts flushes and rests too: a fast kernel behind a
  // slow flush still gets its minimum repeats without a flush-bound wait,
  // and resting costs no device time, only samples. The last run rests too:
  // whatever runs next starts on a rested device.
  const auto timing_start = Clock::now();
  while (static_cast<int>(run_ns.size()) < max_repeats &&
         (static_cast<int>(run_ns.size()) < min_repeats ||
          Since(timing_start) < settings.min_time_ms() * 1e6)) {
    TF_ASSIGN_OR_RETURN(double ns, timed_run());
    run_ns.push_back(ns);
    rest_after(ns);
  }
  return SummarizeRunTimes(std::move(run_ns));
}

Result<v1::TimingStats> TimeOnGpu(const GpuTimingCalls& calls,
                                  const v1::BenchmarkSettings& settings) {
  unsigned char flush_value = 0;
  return RepeatRuns(
      [&]() -> Result<double> {
        const auto start = Clock::now();
        TF_RETURN_IF_ERROR(calls.launch());
        TF_RETURN_IF_ERROR(calls.synchronize());
        return Since(start);
      },
      [&]() -> Result<double> {
        if (settings.flush_l2()) TF_RETURN_IF_ERROR(calls.flush_l2(++flush_value));
        return calls.device_time(calls.launch);
      },
      settings);
}

v1::TimingStats Benchmark(const std::function<void()>& run, const v1::BenchmarkSettings& settings,
                          CacheFlusher* flusher) {
  auto stats = RepeatRuns(
      [&]() -> Result<double> {
        const auto start = Clock::now();
        run();
        return Since(start);
      },
      [&]() -> Result<double> {
        if (flusher != nullptr) flusher->Flush();
        const auto start = Clock::now();
        run();
        return Since(start);
      },
      settings, [](std::chrono::nanoseconds) {});  // the host does not rest
  return *stats;                                   // host runs cannot fail
}

}  // namespace tf::runner
