#include "worker/devices.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <set>

#include "worker/cpu_devices.h"
#include "worker/nvidia_devices.h"

namespace tf::worker {
namespace {

bool IsNumber(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

Result<std::vector<Device>> DiscoverDevices(std::string_view devices_flag,
                                            const std::string& label) {
  const std::string flag(devices_flag);
  // Items between commas; a number alone continues the previous item's list
  // ("nvidia:0,1").
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
    std::string kind;
    std::vector<int> numbers;  // after the colon
  };
  std::vector<Request> requests;
  std::set<std::string> kinds_seen;
  for (const std::string& item : items) {
    Request request{item.substr(0, item.find(':')), {}};
    for (size_t at = request.kind.size(); at < item.size();) {
      size_t end = item.find(',', at + 1);
      if (end == std::string::npos) end = item.size();
      std::string_view text = std::string_view(item).substr(at + 1, end - at - 1);
      int value = 0;
      auto [stop, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (ec != std::errc() || stop != text.data() + text.size() || value < 0) {
        return Status::InvalidArgument("--devices '" + flag + "': '" + std::string(text) +
                                       "' in '" + item + "' must be a non-negative integer");
      }
      request.numbers.push_back(value);
      at = end;
    }
    if (!kinds_seen.insert(request.kind).second) {
      return Status::InvalidArgument("--devices '" + flag + "': kind '" + request.kind +
                                     "' is given twice");
    }
    if (request.kind == "cpu" &&
        (request.numbers.size() > 1 || (!request.numbers.empty() && request.numbers[0] < 1))) {
      return Status::InvalidArgument("--devices '" + flag + "': count in '" + item +
                                     "' must be a positive integer");
    }
    if (request.kind != "cpu" && request.kind != "nvidia") {
      return Status::InvalidArgument("--devices '" + flag + "': unknown device kind '" +
                                     request.kind + "'; known kinds: cpu, nvidia");
    }
    requests.push_back(std::move(request));
  }

  std::vector<Device> devices;
  for (const Request& request : requests) {
    const int first_index = static_cast<int>(devices.size());
    auto found = request.kind == "cpu"
                     ? DiscoverCpuDevices(request.numbers.empty() ? 1 : request.numbers[0],
                                          first_index, label)
                     : DiscoverNvidiaDevices(request.numbers, first_index, label);
    if (!found.ok()) return found.status();
    devices.insert(devices.end(), found->begin(), found->end());
  }
  return devices;
}

std::string SanitizeForDeviceClass(const std::string& model) {
  std::string out;
  for (char c : model) {
    bool keep = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_';
    if (keep) {
      out += c;
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "unknown" : out;
}

}  // namespace tf::worker
