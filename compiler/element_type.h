// What a toolchain writes for a buffer's element type in generated source: a
// C++ type name, or the header that declares the type. Each toolchain keeps
// one table with an entry per dtype a spec may name.
#pragma once

#include <span>
#include <string>

#include "common/status.h"
#include "tunefleet/v1/spec.pb.h"

namespace tf::compiler {

struct DtypeText {
  const char* dtype;  // "f16"
  const char* text;   // a type ("_Float16"), a header ("fp16.h"), or "" for nothing
};

// The text of the buffer's dtype; InvalidArgument naming the buffer and the
// table's dtypes when the table has none for it.
Result<std::string> TextForDtype(const ::tunefleet::v1::Buffer& buffer,
                                 std::span<const DtypeText> table);

}  // namespace tf::compiler
