#include "vendors/replay/replay_devices.h"

#include <cmath>
#include <filesystem>

#include "search/recorded_space.h"
#include "vendors/replay/replay_backend.h"

namespace tf::replay {
namespace {

constexpr const char* kSpeedProperty = "replay_speed_permille";

}  // namespace

Result<runner::Device> DiscoverReplayDevice(const std::string& path, int index,
                                            const std::string& label, double speed) {
  if (!(speed >= 0)) {
    return Status::InvalidArgument("--replay-speed must be >= 0, got " + std::to_string(speed));
  }
  auto recording = search::ReadRecordedSpace(path);
  if (!recording.ok()) {
    return Status::InvalidArgument("replay:" + path + ": " + recording.status().message());
  }
  std::string model = recording->device;
  if (model.empty()) model = std::filesystem::path(path).filename().string();
  runner::Device device;
  device.files = {std::filesystem::absolute(path).string()};
  v1::DeviceInfo& info = device.info;
  info.set_index(index);
  info.set_vendor("replay");
  info.set_model(model);
  info.set_arch("replay");
  std::string device_class = "replay/" + runner::SanitizeForDeviceClass(model);
  if (!label.empty()) {
    device_class += "/" + label;
    info.add_labels(label);
  }
  info.set_device_class(device_class);
  (*info.mutable_properties())[kSpeedProperty] = std::llround(speed * 1000);
  return device;
}

Result<std::unique_ptr<runner::Backend>> MakeReplayBackend(const v1::DeviceInfo& device, int) {
  TF_ASSIGN_OR_RETURN(search::RecordedSpace recording,
                      search::ReadRecordedSpace(runner::DeviceFileName(0)));
  auto speed = device.properties().find(kSpeedProperty);
  const double factor = speed == device.properties().end() ? 1.0 : speed->second / 1000.0;
  return std::unique_ptr<runner::Backend>(new ReplayBackend(std::move(recording), factor));
}

void ConfineReplayRunner(uint64_t memory_bytes, sandbox::Policy& policy) {
  policy.allow_processes = false;
  policy.max_open_files = 256;
  policy.max_address_space_bytes = memory_bytes;
}

}  // namespace tf::replay
