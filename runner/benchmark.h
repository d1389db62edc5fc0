// Timing one candidate honestly: warm-up first, then timed runs until both
// the minimum time and the minimum repeats are reached, the cache flushed
// before each timed run when asked, and the spread kept, not only the mean.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "common/status.h"
#include "tunefleet/v1/common.pb.h"
#include "tunefleet/v1/spec.pb.h"

namespace tf::runner {

namespace v1 = ::tunefleet::v1;

// Evicts the caches by writing a buffer larger than the last-level cache.
class CacheFlusher {
 public:
  explicit CacheFlusher(int64_t last_level_cache_bytes);
  void Flush();

 private:
  std::vector<unsigned char> buffer_;
};

// median, p10, p90, min, mean and repeats of run times in nanoseconds.
v1::TimingStats SummarizeRunTimes(std::vector<double> run_ns);

// The timing loop of every device: `warm_up` runs until settings.warmup_ms
// have passed (at least once), then `timed_run` (one run, preceded by its
// cache flush, returning the run's own time in ns) until both the minimum
// time and the minimum repeats are reached: at least one timed run, at most
// settings.max_repeats (when > 0). Stops at the first error.
Result<v1::TimingStats> RepeatRuns(const std::function<Status()>& warm_up,
                                   const std::function<Result<double>()>& timed_run,
                                   const v1::BenchmarkSettings& settings);

// On the host, with the steady clock. `flusher` may be null: no flushing.
v1::TimingStats Benchmark(const std::function<void()>& run, const v1::BenchmarkSettings& settings,
                          CacheFlusher* flusher);

}  // namespace tf::runner
