#include "worker/devices.h"

#include <algorithm>
#include <charconv>
#include <set>

#include "vendors/device_kinds.h"

namespace tf::worker {
namespace {

bool IsNumber(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

Result<std::vector<Device>> DiscoverDevices(std::string_view devices_flag, const std::string& label,
                                            double replay_speed) {
  const std::string flag(devices_flag);
  // Items between commas; a number alone continues the previous item's list
  // ("kind:0,1").
  std::vector<std::string> items;
  size_t pos = 0;
  while (true) {
    size_t comma = flag.find(',', pos);
    std::string item = flag.substr(pos, comma == std::string::npos ? comma : comma - pos);
    if (IsNumber(item) && !items.empty()) {
      items.back() += "," + item;
    } else {
      items.push_back(item);
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }

  // The whole flag is checked before anything is discovered.
  struct Request {
    const vendors::DeviceKind* kind;
    std::vector<int> numbers;  // after the colon
    std::string path;          // after the colon, for kinds backed by a file
  };
  std::vector<Request> requests;
  std::set<std::string> kinds_seen;
  for (const std::string& item : items) {
    const std::string kind = item.substr(0, item.find(':'));
    auto found = vendors::FindDeviceKind(kind);
    if (!found.ok()) {
      return Status::InvalidArgument("--devices '" + flag + "': " + found.status().message());
    }
    if ((*found)->discover_file != nullptr) {
      if (item.size() <= kind.size() + 1) {
        return Status::InvalidArgument("--devices '" + flag + "': '" + item +
                                       "' needs a file: " + kind + ":FILE");
      }
      requests.push_back({*found, {}, item.substr(kind.size() + 1)});
      continue;
    }
    std::vector<int> numbers;
    for (size_t at = kind.size(); at < item.size();) {
      size_t end = item.find(',', at + 1);
      if (end == std::string::npos) end = item.size();
      std::string_view text = std::string_view(item).substr(at + 1, end - at - 1);
      int value = 0;
      auto [stop, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (ec != std::errc() || stop != text.data() + text.size() || value < 0) {
        return Status::InvalidArgument("--devices '" + flag + "': '" + std::string(text) +
                                       "' in '" + item + "' must be a non-negative integer");
      }
      numbers.push_back(value);
      at = end;
    }
    if (!kinds_seen.insert(kind).second) {
      return Status::InvalidArgument("--devices '" + flag + "': kind '" + kind +
                                     "' is given twice");
    }
    if (Status checked = (*found)->check_numbers(numbers); !checked.ok()) {
      return Status::InvalidArgument("--devices '" + flag + "': in '" + item +
                                     "': " + checked.message());
    }
    requests.push_back({*found, std::move(numbers), ""});
  }

  std::vector<Device> devices;
  for (const Request& request : requests) {
    const int first_index = static_cast<int>(devices.size());
    if (request.kind->discover_file != nullptr) {
      auto found = request.kind->discover_file(request.path, first_index, label, replay_speed);
      if (!found.ok()) return found.status();
      devices.push_back(*std::move(found));
      continue;
    }
    auto found = request.kind->discover(request.numbers, first_index, label);
    if (!found.ok()) return found.status();
    devices.insert(devices.end(), found->begin(), found->end());
  }
  // A worker with nothing to offer would ask to register forever. Unavailable:
  // a GPU's driver may not have made its device nodes yet (just booted).
  if (devices.empty()) {
    return Status::Unavailable("--devices '" + flag +
                               "' finds no device on this host (the lines above say why)");
  }
  return devices;
}

}  // namespace tf::worker
