// The compile side's vendor table: a kernel's language chooses its toolchain,
// the vendor whose devices run it and that vendor's rule for which compiled
// architectures run on which devices, here and nowhere else. Its rows are the
// vendor folders' own (vendors/vendor.h): a new vendor is a new folder
// vendors/<name>/ whose <name>_vendor.h names its languages (kNames) and
// whose library tf_<name>_toolchain defines kCompileSide; nothing here
// changes, and no code here names a vendor.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

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

// The languages of the table, those this build left out included, by name.
std::vector<std::string> Languages();

// The version of each toolchain this host builds `vendor`'s kernels with, by
// language; languages whose toolchain is missing here or left out of this
// build are absent. Runs each compiler once to ask (g++ --version).
std::map<std::string, std::string> ToolchainVersions(const std::string& vendor);

// Fills what the language implies of an unset target: the vendor whose
// devices run it and, for toolchains with only one, the architecture ("host"
// for cpp). A target.vendor that cannot run the language, or an unknown
// language, is InvalidArgument naming the field; nothing is changed then.
Status CompleteTarget(::tunefleet::v1::KernelSpec* spec);

// Whether code that spec's toolchain built for `code_arch` runs on a device
// reporting `device_arch`: always when they are equal or `code_arch` is
// empty, otherwise as the vendor's rule says (an sm_90a build runs on an
// sm_90 device).
bool CodeRunsOn(const ::tunefleet::v1::KernelSpec& spec, const std::string& code_arch,
                const std::string& device_arch);

}  // namespace tf::vendors
