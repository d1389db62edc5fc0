// The version a toolchain reports for the compiler it found: the first line
// of what `program --version` prints. Finding that the program runs at all is
// the point: a toolchain whose compiler cannot start is not offered.
#pragma once

#include <string>

#include "common/status.h"

namespace tf::compiler {

// The first line of `program --version`'s output, run for 30 seconds at most;
// else Unavailable whose message is why, for the toolchain to say whose
// program failed: the program's output when it ran and failed, or why it
// could not be run.
Result<std::string> ToolVersion(const std::string& program);

}  // namespace tf::compiler
