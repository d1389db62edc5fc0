// What a vendor folder declares about itself, in vendors/<name>/<name>_vendor.h
// (namespace tf::<name>, as cpu_vendor.h):
//
//   kNames        Names, inline there: known to every build, the folder
//                 switched on or not, so that a switched-off vendor's
//                 languages are still refused as unavailable, not unknown.
//   kCompileSide  CompileSide, defined in its library tf_<name>_toolchain.
//   kDeviceKind   DeviceKind (device_kinds.h), defined in tf_<name>_device.
//
// vendors/CMakeLists.txt finds the folders and writes the lists below into
// the build tree, naming the last two only for the folders this build
// switched on: those lists are the one place that chooses among vendors, and
// only the tables (toolchains.cc, device_kinds.cc) read them.
#pragma once

#include <memory>
#include <span>
#include <string>

#include "common/status.h"
#include "compiler/toolchain.h"
#include "tunefleet/v1/spec.pb.h"

namespace tf::vendors {

struct DeviceKind;

struct Language {
  const char* name;          // a spec's `language`
  const char* default_arch;  // for an unset target.arch; empty: the device's
};

struct Names {
  // The folder's name: its device kind's, and the target.vendor of its
  // languages.
  const char* vendor;
  std::span<const Language> languages;
};

// The toolchain for spec.language(), one of the vendor's languages,
// compiling for a device of `device_arch` (toolchains.h, MakeToolchain).
using MakeToolchainFn = Result<std::unique_ptr<compiler::Toolchain>> (*)(
    const ::tunefleet::v1::KernelSpec& spec, const std::string& device_arch);
// Whether code built for `code_arch` runs on a device of another
// `device_arch` (toolchains.h, CodeRunsOn).
using RunsOnFn = bool (*)(const std::string& code_arch, const std::string& device_arch);

struct CompileSide {
  MakeToolchainFn make;
  RunsOnFn runs_on;  // null: never
};

struct VendorRow {
  const Names* names;
  const CompileSide* compile_side;  // null: switched off in this build
};

// Every vendor folder, those every build has (no TF_VENDOR_<NAME> option)
// first, then the switchable ones, each group by folder name.
std::span<const VendorRow> VendorRows();

// The device kinds of the vendors this build switched on, in that order.
std::span<const DeviceKind* const> DeviceKindRows();

}  // namespace tf::vendors
