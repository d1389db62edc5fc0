// spec.compile_options as compiler arguments, checked against a toolchain's
// allowlist: options that could load plugins, write files or hand arguments
// to other tools never reach a compiler. This is the one compile-option
// policy: each toolchain's Validate applies it, which the coordinator calls at
// submit and the batch builder before every build, so both give one answer.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/status.h"
#include "tunefleet/v1/spec.pb.h"

namespace tf::compiler {

// An entry may hold several whitespace-separated options, and "-D NAME",
// "-U NAME", "-I DIR" may be split over two tokens; both are normalised to one
// argument per option. "-I" must name a relative directory inside the job's
// sources; every other option must satisfy `allowed`. Errors name the option,
// the entry (compile_options[k]), the toolchain and `allowed_summary`.
Result<std::vector<std::string>> AllowedCompileFlags(
    const ::tunefleet::v1::KernelSpec& spec, const std::function<bool(const std::string&)>& allowed,
    const std::string& toolchain, const std::string& allowed_summary);

}  // namespace tf::compiler
