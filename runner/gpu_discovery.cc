#include "runner/gpu_discovery.h"

#include <spdlog/spdlog.h>

namespace tf::runner {

Result<std::vector<Device>> NoGpus(std::string_view vendor, const std::vector<int>& ordinals,
                                   const std::string& why, Code code) {
  if (!ordinals.empty()) {
    return Status(code, "--devices asks for " + std::string(vendor) + " GPU " +
                            std::to_string(ordinals.front()) + " but " + why);
  }
  spdlog::info("no {} devices: {}", vendor, why);
  return std::vector<Device>{};
}

Result<std::vector<Device>> DescribeGpus(std::string_view vendor, const std::vector<int>& ordinals,
                                         int count, int first_index, const DescribeGpu& describe) {
  std::vector<int> wanted = ordinals;
  // Tested on `ordinals`: on `wanted`, it would stop after GPU 0.
  for (int ordinal = 0; ordinals.empty() && ordinal < count; ++ordinal) wanted.push_back(ordinal);
  std::vector<Device> devices;
  for (int ordinal : wanted) {
    if (ordinal < 0 || ordinal >= count) {
      return Status::InvalidArgument("--devices asks for " + std::string(vendor) + " GPU " +
                                     std::to_string(ordinal) + " but this host has " +
                                     std::to_string(count) + " (ordinals 0.." +
                                     std::to_string(count - 1) + ")");
    }
    TF_ASSIGN_OR_RETURN(Device device,
                        describe(ordinal, first_index + static_cast<int>(devices.size())));
    devices.push_back(std::move(device));
  }
  return devices;
}

}  // namespace tf::runner
