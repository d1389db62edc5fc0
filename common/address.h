// Checks of gRPC addresses that gRPC itself lets through: it takes a port over
// 65535 modulo 65536 (127.0.0.1:99999 listens on, or dials, port 34463), and
// serves an address without a port on 443.
#pragma once

#include <string_view>

#include "common/status.h"

namespace tf {

// The port that ends an address ("HOST:PORT", "[V6]:PORT",
// "dns:///HOST:PORT") is in 0-65535. An address that does not end in digits
// (unix:PATH) passes: whether it needs a port is the caller's question.
// InvalidArgument "'ADDRESS': port N is out of range (0-65535)" otherwise.
Status CheckPortRange(std::string_view address);

// An address to listen on, or a coordinator's to dial: "HOST:PORT" or
// "[V6]:PORT", the port in 0-65535 (0, to listen on: any free one).
Status CheckListenAddress(std::string_view address);

}  // namespace tf
