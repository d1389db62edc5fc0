#include "compiler/element_type.h"

namespace tf::compiler {

Result<std::string> TextForDtype(const ::tunefleet::v1::Buffer& buffer,
                                 std::span<const DtypeText> table) {
  std::string dtypes;
  for (const DtypeText& entry : table) {
    if (buffer.dtype() == entry.dtype) return std::string(entry.text);
    dtypes += (dtypes.empty() ? "" : " ") + std::string(entry.dtype);
  }
  return Status::InvalidArgument("buffer " + buffer.name() + ": dtype '" + buffer.dtype() +
                                 "' is not one of " + dtypes);
}

}  // namespace tf::compiler
