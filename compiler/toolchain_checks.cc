#include "compiler/toolchain_checks.h"

#include "compiler/source_tree.h"

namespace tf::compiler {

Status CheckMainSource(const ::tunefleet::v1::KernelSpec& spec) {
  if (spec.source().empty()) {
    return Status::InvalidArgument("source is empty: name the main source file to compile");
  }
  return CheckSourcePath(spec.source());
}

}  // namespace tf::compiler
