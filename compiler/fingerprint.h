// The identity of a compiled kernel: results measured for one fingerprint are
// valid for every job with the same fingerprint, so it covers everything that
// changes the machine code or how it is called, and nothing else.
#pragma once

#include <string>
#include <vector>

#include "tunefleet/v1/spec.pb.h"

namespace tf::compiler {

// Lowercase hex SHA-256 over the sources (by path, so their order does not
// matter), main source, language, entry, compile options, target, launch
// geometry, buffer and scalar signature, reference and toolchain version.
// Left out on purpose: the kernel's name and its parameter space (a wider
// space must reuse the results of a narrower one), problems, buffer sizes and
// initialisation, and benchmark settings.
std::string KernelFingerprint(const ::tunefleet::v1::KernelSpec& spec,
                              const std::vector<::tunefleet::v1::SourceFile>& sources,
                              const std::string& toolchain_version);

}  // namespace tf::compiler
