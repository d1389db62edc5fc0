// Replay devices: `--devices replay:FILE` offers a device that answers
// candidates from a recorded search space (search/recorded_space.h: Kernel
// Tuner cache files and T4 result files, gzip or not) instead of running
// them, so that whole jobs, strategies included, run through the real
// service on recorded hardware. The functions here make
// kDeviceKind (replay_vendor.h).
//
// `replay:FOLDER` is one device with every recording in the folder (*.json,
// *.json.gz): each must name its problem (a top-level `problem`, as
// TuneFleet's exports do), and a candidate is answered from its problem's
// recording. A single file answers the problems it names (a job's T4 export
// names several) and no other; one that names none answers every problem.
//
// A recorded result is replayed as it was (a time, or the failure recorded:
// compile, runtime, wrong result, timeout; a configuration the recording
// marks invalid comes back pruned), after sleeping the recorded compile and
// run time scaled by `speed` (0: no sleep). A configuration the recording
// lacks is outside the space: a runtime failure naming it.
//
// The device is vendor "replay", arch "replay", model the recorded device
// (the file's name when the recording does not say), device class
// "replay/<model>" (plus "/<label>"), and property replay_speed_permille.
#pragma once

#include <memory>
#include <string>

#include "common/status.h"
#include "runner/backend.h"
#include "runner/device.h"
#include "sandbox/sandbox.h"

namespace tf::replay {

namespace v1 = ::tunefleet::v1;

// Reads `path`, a recording or a folder of them (so that a bad file is
// refused at start, naming the problem), and describes its device; the
// recordings become the device's files, in name order.
Result<runner::Device> DiscoverReplayDevice(const std::string& path, int index,
                                            const std::string& label, double speed);

// A ReplayBackend over the recordings the runner finds in its folder.
Result<std::unique_ptr<runner::Backend>> MakeReplayBackend(const v1::DeviceInfo& device,
                                                           int ordinal);

// A replay runner reads only its folder: no processes, few files, its
// address space limited.
void ConfineReplayRunner(uint64_t memory_bytes, sandbox::Policy& policy);

}  // namespace tf::replay
