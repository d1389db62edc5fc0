#include "common/address.h"

#include <string>

namespace tf {

Status CheckPortRange(std::string_view address) {
  const size_t colon = address.rfind(':');
  if (colon == std::string_view::npos || colon + 1 == address.size()) return Status::Ok();
  const std::string_view port = address.substr(colon + 1);
  if (port.find_first_not_of("0123456789") != std::string_view::npos) return Status::Ok();
  if (port.size() <= 5 && std::stoi(std::string(port)) <= 65535) return Status::Ok();
  return Status::InvalidArgument("'" + std::string(address) + "': port " + std::string(port) +
                                 " is out of range (0-65535)");
}

}  // namespace tf
