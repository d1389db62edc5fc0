// The port that ends a gRPC address ("HOST:PORT", "[V6]:PORT",
// "dns:///HOST:PORT"), checked to be in 0-65535: gRPC takes a larger one
// modulo 65536 (127.0.0.1:99999 listens on, or dials, port 34463) instead of
// refusing it. An address that does not end in digits (unix:PATH) passes;
// whether it needs a port is the caller's question.
#pragma once

#include <string_view>

#include "common/status.h"

namespace tf {

// InvalidArgument "'ADDRESS': port N is out of range (0-65535)" when it is.
Status CheckPortRange(std::string_view address);

}  // namespace tf
