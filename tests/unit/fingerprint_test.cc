#include "compiler/fingerprint.h"

#include <gtest/gtest.h>

#include "kernelspec/config.h"

namespace tf::compiler {
namespace {

namespace v1 = ::tunefleet::v1;

v1::SourceFile Source(const std::string& path, const std::string& content) {
  v1::SourceFile file;
  file.set_path(path);
  file.set_content(content);
  return file;
}

class FingerprintTest : public ::testing::Test {
 protected:
  FingerprintTest() {
    spec_.set_name("scale");
    spec_.set_language("cpp");
    spec_.set_source("scale.h");
    spec_.set_entry("scale<{U}>");
    auto* in = spec_.add_buffers();
    in->set_name("in");
    in->set_dtype("f32");
    auto* out = spec_.add_buffers();
    out->set_name("out");
    out->set_dtype("f32");
    out->set_output(true);
    spec_.add_scalars("N");
    spec_.mutable_verify()->set_reference("scale_reference");
    sources_ = {Source("scale.h", "#include \"detail.h\"\n"), Source("detail.h", "// v1\n")};
  }

  std::string Fingerprint() const { return KernelFingerprint(spec_, sources_, "g++ 12.2.0"); }

  // Whether `mutate` changes the fingerprint of spec_, which is left as it was.
  template <typename Mutate>
  bool Changes(Mutate mutate) {
    const std::string before = Fingerprint();
    const v1::KernelSpec saved = spec_;
    mutate(spec_);
    const std::string after = Fingerprint();
    spec_ = saved;
    return after != before;
  }

  v1::KernelSpec spec_;
  std::vector<v1::SourceFile> sources_;
};

TEST_F(FingerprintTest, SameInputsSameFingerprint) {
  std::string first = Fingerprint();
  EXPECT_EQ(first.size(), 64u);
  EXPECT_EQ(Fingerprint(), first);
  std::swap(sources_[0], sources_[1]);
  EXPECT_EQ(Fingerprint(), first);
}

TEST_F(FingerprintTest, AnySourceByteChangesIt) {
  std::string before = Fingerprint();
  sources_[1].set_content("// v2\n");
  EXPECT_NE(Fingerprint(), before);
}

TEST_F(FingerprintTest, SourcePathChangesIt) {
  std::string before = Fingerprint();
  sources_[1].set_path("detail2.h");
  EXPECT_NE(Fingerprint(), before);
}

TEST_F(FingerprintTest, ToolchainVersionChangesIt) {
  EXPECT_NE(KernelFingerprint(spec_, sources_, "g++ 12.2.0"),
            KernelFingerprint(spec_, sources_, "g++ 13.1.0"));
}

TEST_F(FingerprintTest, WhatIsCompiledOrCalledChangesIt) {
  EXPECT_TRUE(Changes([](v1::KernelSpec& s) { s.set_entry("scale<{U}, 2>"); }));
  EXPECT_TRUE(Changes([](v1::KernelSpec& s) { s.add_compile_options("-ffast-math"); }));
  EXPECT_TRUE(Changes([](v1::KernelSpec& s) { s.mutable_buffers(0)->set_dtype("f64"); }));
  EXPECT_TRUE(Changes([](v1::KernelSpec& s) { s.mutable_buffers(0)->set_output(true); }));
  EXPECT_TRUE(Changes([](v1::KernelSpec& s) { s.add_scalars("M"); }));
  EXPECT_TRUE(Changes([](v1::KernelSpec& s) { s.mutable_verify()->set_reference("other"); }));
  EXPECT_TRUE(Changes([](v1::KernelSpec& s) { s.mutable_target()->set_arch("znver4"); }));
  EXPECT_TRUE(Changes([](v1::KernelSpec& s) { s.set_param_style("define"); }));
  EXPECT_TRUE(Changes([](v1::KernelSpec& s) { s.mutable_buffers(0)->set_memory("constant"); }));
  // The defaults, written out or not, are the same kernel.
  EXPECT_FALSE(Changes([](v1::KernelSpec& s) { s.set_param_style("template"); }));
  EXPECT_FALSE(Changes([](v1::KernelSpec& s) { s.mutable_buffers(0)->set_memory("global"); }));
}

// A result checked under other tolerances, on other inputs or another
// output extent, or kept where a stricter spec prunes it, is not this
// kernel's: a job reuses earlier results of its own fingerprint only.
TEST_F(FingerprintTest, WhatDecidesWhetherAResultIsRightOrAllowedChangesIt) {
  spec_.mutable_verify()->set_rtol(1e-2);
  spec_.mutable_verify()->set_atol(1e-2);
  spec_.mutable_buffers(0)->set_count("N");
  spec_.mutable_buffers(1)->set_count("N");
  spec_.mutable_buffers(0)->set_random_min(-1);
  spec_.mutable_buffers(0)->set_random_max(1);
  EXPECT_TRUE(Changes([](v1::KernelSpec& s) { s.mutable_verify()->set_rtol(1e-6); }));
  EXPECT_TRUE(Changes([](v1::KernelSpec& s) { s.mutable_verify()->set_atol(1e-6); }));
  EXPECT_TRUE(Changes([](v1::KernelSpec& s) { s.mutable_verify()->add_grid("N / 256"); }));
  EXPECT_TRUE(Changes([](v1::KernelSpec& s) { s.mutable_verify()->add_block("256"); }));
  EXPECT_TRUE(Changes([](v1::KernelSpec& s) { s.mutable_buffers(1)->set_count("2 * N"); }));
  EXPECT_TRUE(Changes([](v1::KernelSpec& s) { s.mutable_buffers(0)->set_init("ones"); }));
  EXPECT_TRUE(Changes([](v1::KernelSpec& s) { s.mutable_buffers(0)->set_random_min(0); }));
  EXPECT_TRUE(Changes([](v1::KernelSpec& s) { s.mutable_buffers(0)->set_random_max(100); }));
  EXPECT_TRUE(Changes([](v1::KernelSpec& s) { s.set_forbid_spills(true); }));
  EXPECT_TRUE(Changes([](v1::KernelSpec& s) { s.set_forbid_performance_warnings(true); }));
  EXPECT_TRUE(Changes([](v1::KernelSpec& s) {
    auto* map = s.add_tensor_maps();
    map->set_buffer("in");
    map->add_dims("N");
    map->add_box("64");
  }));
  v1::KernelSpec with_map = spec_;
  auto* map = with_map.add_tensor_maps();
  map->set_buffer("in");
  map->add_dims("N");
  map->add_box("64");
  const std::string mapped = KernelFingerprint(with_map, sources_, "g++ 12.2.0");
  map->set_swizzle_bytes(128);
  EXPECT_NE(KernelFingerprint(with_map, sources_, "g++ 12.2.0"), mapped);
  map->set_swizzle_bytes(0);
  map->set_box(0, "128");
  EXPECT_NE(KernelFingerprint(with_map, sources_, "g++ 12.2.0"), mapped);
  // The default, written out or not; the range of inputs that are not random.
  EXPECT_FALSE(Changes([](v1::KernelSpec& s) { s.mutable_buffers(0)->set_init("random"); }));
  spec_.mutable_buffers(0)->set_init("zeros");
  EXPECT_FALSE(Changes([](v1::KernelSpec& s) { s.mutable_buffers(0)->set_random_max(100); }));
}

// Results stay reusable when only the search around the kernel, or how it is
// timed, changes.
TEST_F(FingerprintTest, NameParamsProblemsAndBenchmarkSettingsDoNotChangeIt) {
  std::string before = Fingerprint();
  spec_.set_name("renamed");
  spec_.add_params()->set_name("U");
  *spec_.add_problems() = *kernelspec::ParseProblem("N=4096");
  spec_.mutable_benchmark()->set_warmup_ms(50);
  spec_.mutable_benchmark()->set_timeout_s(30);
  spec_.mutable_search()->set_early_stop(2);
  EXPECT_EQ(Fingerprint(), before);
}

}  // namespace
}  // namespace tf::compiler
