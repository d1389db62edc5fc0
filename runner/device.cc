#include "runner/device.h"

#include <cctype>

namespace tf::runner {

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

std::string DeviceFileName(size_t n) { return "device-file-" + std::to_string(n); }

}  // namespace tf::runner
