// The compile side's vendor table: a kernel's language chooses its toolchain
// here and nowhere else. Adding a vendor adds one row (vendors/toolchains.cc).
#pragma once

#include <memory>
#include <string>

#include "common/status.h"
#include "compiler/toolchain.h"
#include "tunefleet/v1/spec.pb.h"

namespace tf::vendors {

// The toolchain for spec.language(), compiling for a device of `device_arch`
// (empty: the toolchain checks specs and names its version but may refuse to
// compile). A language this build left out is Unavailable; an unknown one is
// InvalidArgument naming the known languages.
Result<std::unique_ptr<compiler::Toolchain>> MakeToolchain(const ::tunefleet::v1::KernelSpec& spec,
                                                           const std::string& device_arch = "");

}  // namespace tf::vendors
