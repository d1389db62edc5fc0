#include "worker/devices.h"

#include <charconv>
#include <set>

#include "worker/cpu_devices.h"

namespace tf::worker {

Result<std::vector<Device>> DiscoverDevices(std::string_view devices_flag,
                                            const std::string& label) {
  std::vector<Device> devices;
  std::set<std::string> kinds_seen;
  size_t pos = 0;
  while (pos <= devices_flag.size()) {
    size_t comma = devices_flag.find(',', pos);
    std::string_view item = devices_flag.substr(pos, comma - pos);
    std::string_view kind = item.substr(0, item.find(':'));
    int count = 1;
    if (kind.size() < item.size()) {
      std::string_view count_text = item.substr(kind.size() + 1);
      auto [end, ec] =
          std::from_chars(count_text.data(), count_text.data() + count_text.size(), count);
      if (ec != std::errc() || end != count_text.data() + count_text.size() || count < 1) {
        return Status::InvalidArgument("--devices '" + std::string(devices_flag) + "': count in '" +
                                       std::string(item) + "' must be a positive integer");
      }
    }
    if (!kinds_seen.insert(std::string(kind)).second) {
      return Status::InvalidArgument("--devices '" + std::string(devices_flag) + "': kind '" +
                                     std::string(kind) + "' is given twice");
    }
    if (kind != "cpu") {
      return Status::InvalidArgument("--devices '" + std::string(devices_flag) +
                                     "': unknown device kind '" + std::string(kind) +
                                     "'; known kinds: cpu");
    }
    TF_ASSIGN_OR_RETURN(auto found,
                        DiscoverCpuDevices(count, static_cast<int>(devices.size()), label));
    devices.insert(devices.end(), found.begin(), found.end());
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return devices;
}

}  // namespace tf::worker
