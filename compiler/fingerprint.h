// The identity of a compiled kernel and of what its results mean: results
// measured for one fingerprint are valid for every job with the same
// fingerprint, so it covers everything that changes the machine code, how it
// is called, or whether a result is right or allowed, and nothing else.
#pragma once

#include <string>
#include <vector>

#include "tunefleet/v1/spec.pb.h"

namespace tf::compiler {

// Lowercase hex SHA-256 over the sources (by path, so their order does not
// matter), main source, language, entry, compile options, target, launch
// geometry, buffer and scalar signature, reference and toolchain version; and
// the checks: tolerances, the reference's launch, buffer counts and inputs,
// tensor maps and the pruning switches (forbid_spills,
// forbid_performance_warnings). Left out on purpose: the kernel's name and
// its parameter space (a wider space must reuse the results of a narrower
// one), problems, and the benchmark and search settings.
std::string KernelFingerprint(const ::tunefleet::v1::KernelSpec& spec,
                              const std::vector<::tunefleet::v1::SourceFile>& sources,
                              const std::string& toolchain_version);

}  // namespace tf::compiler
