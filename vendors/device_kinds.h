// The device side's vendor table: a device kind (the vendor a device
// registers with) chooses its discovery, its runner backend and its runner's
// sandbox here and nowhere else. Its rows are the vendor folders' own
// (vendors/vendor.h): a new vendor is a new folder vendors/<name>/ whose
// library tf_<name>_device defines kDeviceKind, declared in its
// <name>_vendor.h; nothing here changes, and no code here names a vendor.
// Only the vendors this build switched on have a kind.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "runner/backend.h"
#include "runner/device.h"
#include "sandbox/sandbox.h"
#include "tunefleet/v1/common.pb.h"

namespace tf::vendors {

struct DeviceKind {
  const char* name;
  // How --devices writes it, for the worker's --help.
  const char* usage;
  // Kinds of hardware ("kind" or "kind:N,M"): checks the numbers after
  // "kind:" in --devices before anything is discovered; the message says
  // what they must be.
  Status (*check_numbers)(const std::vector<int>& numbers);
  // The devices of this kind on this host for those numbers, indices from
  // `first_index`, `label` added to labels and device class.
  Result<std::vector<runner::Device>> (*discover)(const std::vector<int>& numbers, int first_index,
                                                  const std::string& label);
  // The runner's backend for `device` (the vendor's own number `ordinal`).
  Result<std::unique_ptr<runner::Backend>> (*make_backend)(
      const ::tunefleet::v1::DeviceInfo& device, int ordinal);
  // Adds what the runner of such a device needs to the common sandbox
  // policy (system libraries, its folder, file size limit), with
  // `memory_bytes` as the limit on its memory.
  void (*confine_runner)(uint64_t memory_bytes, sandbox::Policy& policy);
  // Its devices compute in the host's memory, so the runner's memory limit
  // also bounds what a job may use of the device.
  bool shares_host_memory;
  // Kinds backed by a file ("kind:PATH", repeatable) set this instead of
  // check_numbers and discover: one device per file.
  Result<runner::Device> (*discover_file)(const std::string& path, int index,
                                          const std::string& label, double replay_speed) = nullptr;
};

// InvalidArgument naming the known kinds when `name` is none of them. Kinds
// come in the order of vendor.h's lists: every build's first (cpu, replay).
Result<const DeviceKind*> FindDeviceKind(std::string_view name);

// Every kind's usage, "; "-separated, in that order, for --help.
std::string DeviceKindsUsage();

}  // namespace tf::vendors
