#include "common/address.h"

#include <string>

namespace tf {
namespace {

// The digits after the last ':', or "" when there are none or something else.
std::string_view Port(std::string_view address) {
  const size_t colon = address.rfind(':');
  if (colon == std::string_view::npos) return {};
  const std::string_view port = address.substr(colon + 1);
  if (port.find_first_not_of("0123456789") != std::string_view::npos) return {};
  return port;
}

}  // namespace

Status CheckPortRange(std::string_view address) {
  const std::string_view port = Port(address);
  if (port.empty() || (port.size() <= 5 && std::stoi(std::string(port)) <= 65535)) {
    return Status::Ok();
  }
  return Status::InvalidArgument("'" + std::string(address) + "': port " + std::string(port) +
                                 " is out of range (0-65535)");
}

Status CheckListenAddress(std::string_view address) {
  if (Port(address).empty()) {
    return Status::InvalidArgument("'" + std::string(address) +
                                   "': expected HOST:PORT, e.g. 127.0.0.1:50051");
  }
  return CheckPortRange(address);
}

}  // namespace tf
