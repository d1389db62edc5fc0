// Loading a library at run time and binding its functions
// (common/shared_library.h), against the C math library every host has.
#include "common/shared_library.h"

#include <gtest/gtest.h>

#include <cmath>

namespace tf {
namespace {

using CosFn = double(double);

TEST(SharedLibraryTest, BindsAFunctionThatCanBeCalled) {
  auto libm = SharedLibrary::Open("libm.so.6", "the C math library");
  ASSERT_TRUE(libm.ok()) << libm.status().ToString();
  CosFn* cosine = nullptr;
  libm->Bind(cosine, "cos");
  ASSERT_TRUE(libm->CheckBound().ok()) << libm->CheckBound().ToString();
  ASSERT_NE(cosine, nullptr);
  EXPECT_DOUBLE_EQ(cosine(0.0), 1.0);
  EXPECT_EQ(libm->Describe(), "the C math library (libm.so.6)");
}

TEST(SharedLibraryTest, AMissingSymbolIsNamedWithTheLibrary) {
  auto libm = SharedLibrary::Open("libm.so.6", "the C math library");
  ASSERT_TRUE(libm.ok()) << libm.status().ToString();
  CosFn* cosine = nullptr;
  CosFn* missing = &::cos;
  CosFn* also_missing = nullptr;
  libm->Bind(missing, "tf_no_such_function");
  libm->Bind(cosine, "cos");
  libm->Bind(also_missing, "tf_nor_this_one");
  EXPECT_EQ(missing, nullptr);
  EXPECT_NE(cosine, nullptr);
  const Status bound = libm->CheckBound();
  EXPECT_EQ(bound.code(), Code::kUnavailable);
  EXPECT_EQ(bound.message(),
            "the C math library (libm.so.6) lacks tf_no_such_function tf_nor_this_one");
  EXPECT_EQ(libm->CheckBound("is too old: it lacks").message(),
            "the C math library (libm.so.6) is too old: it lacks tf_no_such_function "
            "tf_nor_this_one");
}

TEST(SharedLibraryTest, AMissingOptionalSymbolIsNoError) {
  auto libm = SharedLibrary::Open("libm.so.6", "the C math library");
  ASSERT_TRUE(libm.ok()) << libm.status().ToString();
  CosFn* missing = &::cos;
  CosFn* cosine = nullptr;
  libm->BindOptional(missing, "tf_no_such_function");
  libm->BindOptional(cosine, "cos");
  EXPECT_EQ(missing, nullptr);
  EXPECT_NE(cosine, nullptr);
  EXPECT_TRUE(libm->CheckBound().ok()) << libm->CheckBound().ToString();
}

TEST(SharedLibraryTest, AMissingLibraryIsNamed) {
  auto library = SharedLibrary::Open("libtf_no_such_library.so.1", "a library that is not there");
  ASSERT_FALSE(library.ok());
  EXPECT_EQ(library.status().code(), Code::kUnavailable);
  const std::string& message = library.status().message();
  EXPECT_EQ(
      message.rfind("cannot load a library that is not there (libtf_no_such_library.so.1): ", 0),
      0u)
      << message;
  // The loader's own reason follows.
  EXPECT_GT(message.size(), std::string("cannot load a library that is not there "
                                        "(libtf_no_such_library.so.1): ")
                                .size())
      << message;
}

}  // namespace
}  // namespace tf
