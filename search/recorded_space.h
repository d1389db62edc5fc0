// Recorded search spaces: brute-forced tuning runs read back as a Space with
// each configuration's recorded outcome. Used to evaluate strategies offline
// (bench/search_eval), to replay a device (worker --devices replay:FILE) and to
// import results.
//
// Formats, recognised by content, gzip-compressed or not:
//  - Kernel Tuner cache files (*_cache.json): `tune_params_keys` and
//    `tune_params` give the parameters and their values in order; each `cache`
//    entry one configuration, `time` a number (ms; also when written as text)
//    or a failure string (CompilationFailedConfig, RuntimeFailedConfig,
//    InvalidConfig; any other string, 1e20 (older Kernel Tuners' error value),
//    NaN and Infinity are read as invalid). An entry without `time` is read
//    from the field of the file's `objective`, where Kernel Tuner writes
//    failures: a rate (GFLOP/s, GB/s, GFLOPS/W) as its inverse, so that the
//    fraction of optimum is the rate found over the highest (replay and
//    import take that inverse for milliseconds). A file cut short while
//    Kernel Tuner was still writing it (no closing braces) is read as far as
//    it goes; NaN, Infinity and -Infinity, which Python writes, are read as
//    null anywhere.
//  - T4 result files (*_T4.json, KernelTuner's T4 1.0.0 results schema): each
//    result's `configuration`, `invalidity`, the measurement named by its first
//    objective where that is a time, else the one named `time` (an objective
//    such as GFLOP/s is not minimized), else the first objective where that
//    is a rate, read as its inverse (values may be numbers written as text;
//    an array is read as its mean), the measurements named as that time
//    with _p10, _p90 and _min (TuneFleet's export keeps statistics, not
//    each run), `times.compilation` and `times.runtimes`, all converted to
//    ms: a measurement from its `unit`, else
//    `metadata.timeunit`; `times` from `metadata.timeunit`, else the unit of
//    the time measured (s, ms, us, ns and their spellings; ms when none says).
//    Parameters are the configuration keys recorded; values are those
//    recorded, numbers ascending, the rest as text ("True"/"False" for
//    booleans) sorted. Results naming their `problem` (TuneFleet's exports)
//    are one recording per problem (an export of a job holds several); each
//    must be the file's `problem` if it names one.
// Either may name its problem in a top-level `problem` string, as TuneFleet's
// exports do ("M=1024,N=1024,K=1024", kernelspec::ProblemText's form). A
// correct result's time of 0, below or NaN is read as invalid.
//
// A `tunefleet export` file (client/best_export.h) is refused, saying what to
// import instead: it holds the best configuration per problem only.
//
// Errors name the file and the entry: a configuration that lacks a parameter
// or has a value outside tune_params, the same configuration twice, no
// configurations at all.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "search/space.h"

namespace tf::search {

enum class Outcome {
  kOk,
  kCompileFailed,
  kRuntimeFailed,
  kWrongResult,
  kTimeout,
  kInvalid,  // refused by a restriction the file did not encode, or failed as it does not say
};

const char* OutcomeName(Outcome outcome);

struct RecordedResult {
  Outcome outcome = Outcome::kOk;
  double time_ms = 0;               // the objective; meaningful when outcome is kOk
  double compile_ms = -1;           // -1: not recorded
  double benchmark_ms = -1;         // time spent running it, -1: not recorded
  std::vector<double> runtimes_ms;  // each timed run, when recorded
  // Statistics of the runs where the file keeps them rather than each run
  // (T4: measurements named as the time's, with _p10, _p90, _min); -1: not
  // recorded.
  double p10_ms = -1;
  double p90_ms = -1;
  double min_ms = -1;
};

struct RecordedSpace {
  std::string path;
  std::string format;  // "kerneltuner-cache" or "t4"
  std::string device;  // as the file names it; empty when it does not
  std::string kernel;
  std::string problem;                  // as the file names it; empty when it does not
  Space space;                          // the recorded configurations
  std::vector<RecordedResult> results;  // results[id] belongs to space.config(id)
};

// Every recording in `path`: one, or one per problem named by the results of
// a T4 file, in the order each problem first appears.
Result<std::vector<RecordedSpace>> ReadRecordedSpaces(const std::string& path);

// The recording in `path`; a file of several problems is refused, naming them.
Result<RecordedSpace> ReadRecordedSpace(const std::string& path);

}  // namespace tf::search
