// Toolchains look up what to write for a buffer's dtype in their own table;
// a dtype the table lacks is an error that names the buffer and the choices.
#include "compiler/element_type.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tf::compiler {
namespace {

using ::testing::HasSubstr;

constexpr DtypeText kTable[] = {{"f32", "float"}, {"f16", "cuda_fp16.h"}, {"i32", ""}};

::tunefleet::v1::Buffer Buffer(const std::string& dtype) {
  ::tunefleet::v1::Buffer buffer;
  buffer.set_name("C");
  buffer.set_dtype(dtype);
  return buffer;
}

TEST(ElementTypeTest, FindsTheDtypesText) {
  EXPECT_EQ(*TextForDtype(Buffer("f16"), kTable), "cuda_fp16.h");
  EXPECT_EQ(*TextForDtype(Buffer("f32"), kTable), "float");
  EXPECT_EQ(*TextForDtype(Buffer("i32"), kTable), "");
}

TEST(ElementTypeTest, AnUnknownDtypeNamesTheBufferAndTheChoices) {
  Status status = TextForDtype(Buffer("fp8"), kTable).status();
  EXPECT_EQ(status.code(), Code::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("buffer C: dtype 'fp8' is not one of f32 f16 i32"));
}

}  // namespace
}  // namespace tf::compiler
