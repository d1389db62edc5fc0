// How the runner drives one kind of device. The runner makes the problem's
// inputs and decides what to run; a backend keeps the device's copies of the
// buffers and of the reference outputs, loads the artifact, launches, checks
// outputs where they lie and times. One backend serves every request of a
// runner process.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "runner/host_buffers.h"
#include "tunefleet/v1/common.pb.h"
#include "tunefleet/v1/spec.pb.h"

namespace tf::runner {

// The estimate a candidate under an early-stop threshold gets first (as
// TileLang's autotuner does): this many timed runs after a brief warm-up.
inline constexpr int kEarlyStopRuns = 5;

namespace v1 = ::tunefleet::v1;

// A spec tensor map with one candidate's values: the backend encodes it
// against the working copy of buffer `buffer` and passes it after the scalars.
struct TensorMapLayout {
  int buffer = 0;  // index of the spec buffer
  std::string dtype;
  int element_bytes = 0;
  std::vector<uint64_t> dims;  // innermost first, dense
  std::vector<uint32_t> box;
  int swizzle_bytes = 0;
};

// A kernel of the loaded artifact with its launch geometry and tensor maps
// (ignored by backends that do not launch grids).
struct Launchable {
  void* function = nullptr;  // backend-specific handle
  void* artifact = nullptr;  // backend-specific handle of the loaded artifact it is in
  std::string symbol;        // as the artifact names it
  std::array<int64_t, 3> grid = {1, 1, 1};
  std::array<int64_t, 3> block = {1, 1, 1};
  int64_t shared_mem_bytes = 0;
  std::vector<TensorMapLayout> tensor_maps;
  // Buffers (index, name) with memory: constant: the backend copies each
  // into the artifact's constant-memory symbol of that name before every run
  // (GPU backends; ignored by the others).
  std::vector<std::pair<int, std::string>> constants;
};

// The device's copies of one problem's buffers: the inputs as uploaded, kept
// pristine, the working copies that kernels run on, so that every run starts
// from the same inputs without another upload, and the reference outputs.
// Made by a backend's Upload, used only with that backend, freed with the
// object.
class DeviceBuffers {
 public:
  virtual ~DeviceBuffers() = default;
  // Device memory held, pristine, working and reference copies together.
  virtual int64_t bytes() const = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;

  // Replaces the artifacts loaded before with these: one, or the artifacts
  // of a retime lease's finalists, loaded together so that they can be timed
  // in alternation (runner/alternation.h).
  virtual Status Load(const std::vector<std::string>& artifact_paths) = 0;
  // Looks in the `artifact`th of the loaded artifacts (symbols are unique
  // only within one: define-style copies are named by their place in their
  // batch). Errors name the missing symbol; the caller sets the geometry.
  virtual Result<Launchable> Find(size_t artifact, const std::string& symbol) = 0;
  // Called before one problem's candidates are found. A backend whose
  // answers depend on the problem (replay: a recording per problem) turns to
  // it here; an error fails that problem's candidates with its message.
  virtual Status SelectProblem(const v1::Problem&) { return Status::Ok(); }
  // Device copies of `initial`, one per spec buffer; the working copies are
  // undefined until Reset.
  virtual Result<std::unique_ptr<DeviceBuffers>> Upload(std::vector<HostBuffer> initial) = 0;
  // Every working buffer set back to its upload, then the `outputs` poisoned
  // (NaN in floats) so that an element the kernel never writes cannot pass.
  virtual Status Reset(DeviceBuffers& buffers, const std::vector<int>& outputs) = 0;
  // One launch on the working buffers, waited for.
  virtual Status Run(const Launchable& kernel, DeviceBuffers& buffers,
                     const std::vector<int64_t>& scalars) = 0;
  // The working copies of `outputs`, as the reference kernel left them, kept
  // as what Compare checks later runs against.
  virtual Status KeepReference(DeviceBuffers& buffers, const std::vector<int>& outputs) = 0;
  // Working buffer `index`, one of the kept outputs, against its reference,
  // element by element by runner::Compare's rule.
  virtual Result<Comparison> Compare(DeviceBuffers& buffers, int index, double rtol,
                                     double atol) = 0;
  // Warm-up, then timed runs as `settings` say; sensors sampled after.
  virtual Result<v1::TimingStats> Time(const Launchable& kernel, DeviceBuffers& buffers,
                                       const std::vector<int64_t>& scalars,
                                       const v1::BenchmarkSettings& settings) = 0;
  // A backend that answers from a recording instead of running (replay)
  // returns the recorded outcome of `kernel`, found by Find, having spent the
  // time a device would have; the runner then neither checks nor times it, and
  // a recorded time over `early_stop_ns` (0: none) it records as stopped early,
  // so a device spends kEarlyStopRuns runs on it. Others return std::nullopt.
  virtual std::optional<v1::CandidateResult> Answer(const Launchable&, double /*early_stop_ns*/) {
    return std::nullopt;
  }
  // True after an error that leaves the device unusable by this process
  // (a sticky driver error): the runner must exit so that a fresh one starts.
  virtual bool lost() const { return false; }
};

}  // namespace tf::runner
