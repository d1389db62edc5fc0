// Timing one candidate honestly: warm-up first, then timed runs until both
// the minimum time and the minimum repeats are reached, the cache flushed
// before each timed run when asked, the device rested after each run when
// asked, and the spread kept, not only the mean.
#pragma once

#include <chrono>
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

// Waits `duration` on the host, the device idle: RepeatRuns' rest.
void SleepFor(std::chrono::nanoseconds duration);

// The timing loop of every device: `warm_up` runs until settings.warmup_ms
// have passed (at least once), then `timed_run` (one run, preceded by its
// cache flush) until both the minimum time and the minimum repeats are
// reached: at least one timed run, at most settings.max_repeats (when > 0).
// Both return the run's time in ns, after which the device rests for
// settings.rest times that (`rest` waits); the minimum time counts rests.
// Why: a GPU holds its power cap by lowering its clock after sustained load,
// so a kernel timed back to back runs at whatever clock its own runs and the
// candidates before it left: on an H200, 1,605 to 1,980 MHz for the same
// GEMM within one tune. Rested, every candidate is timed at the clock it
// gets when launched alone (bench/hopper_gemm/NOTES.md, v9).
// Stops at the first error.
Result<v1::TimingStats> RepeatRuns(
    const std::function<Result<double>()>& warm_up,
    const std::function<Result<double>()>& timed_run, const v1::BenchmarkSettings& settings,
    const std::function<void(std::chrono::nanoseconds)>& rest = SleepFor);

// The size of a GPU's L2 flush buffer: twice its L2 (`l2_bytes`), so that a
// fill leaves none of the kernel's lines there; at least 2 MiB when the
// runtime reports no L2.
int64_t GpuFlushBytes(int64_t l2_bytes);

// The calls of a GPU runtime that TimeOnGpu needs, all on the default stream.
struct GpuTimingCalls {
  std::function<Status()> launch;       // enqueues one run of the kernel
  std::function<Status()> synchronize;  // waits until the device is idle
  // Enqueues a fill of the L2 flush buffer (GpuFlushBytes) with `value`, a new
  // one each time so that no cache keeps the buffer's lines.
  std::function<Status(unsigned char value)> flush_l2;
  // The device's time in ns of what `enqueue` enqueues: events around it.
  std::function<Result<double>(const std::function<Status()>& enqueue)> device_time;
};

// RepeatRuns on a GPU: warm-up runs timed on the host (their rests need only
// their length), timed runs by device events around the launch alone, after
// an L2 flush when settings.flush_l2.
Result<v1::TimingStats> TimeOnGpu(const GpuTimingCalls& calls,
                                  const v1::BenchmarkSettings& settings);

// On the host, with the steady clock. `flusher` may be null: no flushing.
// settings.rest is for GPUs' power cap: the host does not rest.
v1::TimingStats Benchmark(const std::function<void()>& run, const v1::BenchmarkSettings& settings,
                          CacheFlusher* flusher);

}  // namespace tf::runner
