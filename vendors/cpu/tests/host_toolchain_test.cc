#include "vendors/cpu/host_toolchain.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "common/files.h"
#include "kernelspec/config.h"

namespace tf::cpu {
namespace {

namespace v1 = ::tunefleet::v1;

v1::Config Config(int64_t u) {
  v1::Config config;
  auto* setting = config.add_settings();
  setting->set_name("U");
  *setting->mutable_value() = kernelspec::IntValue(u);
  return config;
}

class HostToolchainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto host = HostToolchain::Detect();
    ASSERT_TRUE(host.ok()) << host.status().ToString();
    host_ = std::move(*host);
    spec_.set_language("cpp");
    spec_.set_source("kernels/scale.h");
    spec_.set_entry("scale<{U}>");
    auto* in = spec_.add_buffers();
    in->set_name("in");
    in->set_dtype("f16");
    auto* out = spec_.add_buffers();
    out->set_name("out");
    out->set_dtype("i32");
    out->set_output(true);
    *spec_.add_problems() = *kernelspec::ParseProblem("N=8,M=2");
    spec_.mutable_verify()->set_reference("scale_reference");
  }

  std::unique_ptr<HostToolchain> host_;
  v1::KernelSpec spec_;
};

TEST_F(HostToolchainTest, ReportsTheCompilerVersion) {
  EXPECT_EQ(host_->name(), "host-g++");
  EXPECT_EQ(host_->target(), "host");
  EXPECT_NE(host_->version().find("g++"), std::string::npos) << host_->version();
  EXPECT_EQ(host_->version().find('\n'), std::string::npos);
}

TEST_F(HostToolchainTest, BatchExportsOneWrapperPerConfigAndTheReference) {
  auto tu = host_->GenerateBatch(spec_, {}, {Config(1), Config(4)});
  ASSERT_TRUE(tu.ok()) << tu.status().ToString();
  EXPECT_NE(tu->find("#include \"kernels/scale.h\""), std::string::npos);
  std::string call =
      "(static_cast<const _Float16*>(b[0]), static_cast<int32_t*>(b[1]), s[0], s[1]);";
  for (int64_t u : {1, 4}) {
    std::string symbol = kernelspec::CandidateSymbol(Config(u));
    EXPECT_NE(tu->find("TF_EXPORT void " + symbol + "("), std::string::npos) << *tu;
    EXPECT_NE(tu->find("scale<" + std::to_string(u) + ">" + call), std::string::npos) << *tu;
  }
  EXPECT_NE(tu->find(std::string("TF_EXPORT void ") + kernelspec::kReferenceSymbol + "("),
            std::string::npos);
  EXPECT_NE(tu->find("scale_reference" + call), std::string::npos) << *tu;
}

TEST_F(HostToolchainTest, NoReferenceExportedWithoutVerification) {
  spec_.mutable_verify()->clear_reference();
  auto tu = host_->GenerateBatch(spec_, {}, {Config(1)});
  ASSERT_TRUE(tu.ok()) << tu.status().ToString();
  EXPECT_EQ(tu->find(kernelspec::kReferenceSymbol), std::string::npos);
}

// Define-style: three configurations of one macro-configured source in one
// shared object, each calling its own copy with its own macro values.
TEST_F(HostToolchainTest, DefineStyleCopiesKeepTheirOwnMacros) {
  auto dir = MakeTempDir("host_toolchain_test-");
  ASSERT_TRUE(dir.ok());
  ASSERT_TRUE(MakeDirs(*dir + "/kernels").ok());
  const std::string source =
      "#include <cstdint>\n"
      "#ifndef U\n#define U 100\n#endif\n"
      "#define TIMES(x) ((x) * U)\n"
      "static int32_t Twice(int32_t v) { return 2 * v; }\n"
      "void scale(const _Float16*, int32_t* out, int64_t n, int64_t) {\n"
      "  for (int64_t i = 0; i < n; ++i) out[i] = Twice(TIMES(1));\n"
      "}\n"
      "void scale_reference(const _Float16*, int32_t* out, int64_t n, int64_t) {\n"
      "  for (int64_t i = 0; i < n; ++i) out[i] = -1;\n"
      "}\n";
  ASSERT_TRUE(WriteFileAtomic(*dir + "/kernels/scale.h", source).ok());
  v1::SourceFile file;
  file.set_path("kernels/scale.h");
  file.set_content(source);
  spec_.set_param_style("define");
  spec_.set_entry("scale");
  const std::vector<v1::Config> configs = {Config(1), Config(4), Config(7)};
  auto tu = host_->GenerateBatch(spec_, {file}, configs);
  ASSERT_TRUE(tu.ok()) << tu.status().ToString();
  ASSERT_TRUE(WriteFileAtomic(*dir + "/batch.cc", *tu).ok());
  auto outcome = host_->Compile(*dir, "batch.cc", "batch.so", spec_, configs, 60);
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  ASSERT_TRUE(outcome->ok) << outcome->diagnostics << "\n" << *tu;
  void* so = dlopen((*dir + "/batch.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(so, nullptr) << dlerror();
  using Entry = void (*)(void* const*, const int64_t*);
  for (const v1::Config& config : configs) {
    auto entry = reinterpret_cast<Entry>(dlsym(so, kernelspec::CandidateSymbol(config).c_str()));
    ASSERT_NE(entry, nullptr) << kernelspec::ConfigKey(config);
    int32_t out[2] = {0, 0};
    void* buffers[2] = {nullptr, out};
    const int64_t scalars[2] = {2, 1};
    entry(buffers, scalars);
    EXPECT_EQ(out[1], 2 * config.settings(0).value().int_value()) << kernelspec::ConfigKey(config);
  }
  auto reference = reinterpret_cast<Entry>(dlsym(so, kernelspec::kReferenceSymbol));
  ASSERT_NE(reference, nullptr);
  dlclose(so);
  std::filesystem::remove_all(*dir);
}

TEST_F(HostToolchainTest, UnknownDtypeNamesTheBuffer) {
  spec_.mutable_buffers(1)->set_dtype("f8");
  Status status = host_->Validate(spec_);
  EXPECT_EQ(status.code(), Code::kInvalidArgument);
  EXPECT_NE(status.message().find("buffer out"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("'f8'"), std::string::npos) << status.message();
}

TEST_F(HostToolchainTest, AcceptsOptimisationAndDefineOptions) {
  for (std::string option :
       {"-O2", "-Ofast -ffast-math -funroll-loops", "-march=znver4", "-mavx2", "-fno-exceptions",
        "-DTILE=4", "-D TILE=4", "-UNDEBUG", "-std=c++23", "-Wall", "-g", "-Ikernels"}) {
    spec_.clear_compile_options();
    spec_.add_compile_options(option);
    EXPECT_TRUE(host_->Validate(spec_).ok()) << option << ": " << host_->Validate(spec_).message();
  }
}

TEST_F(HostToolchainTest, RefusesTensorMaps) {
  spec_.add_tensor_maps()->set_buffer("in");
  Status status = host_->Validate(spec_);
  EXPECT_EQ(status.code(), Code::kInvalidArgument);
  EXPECT_NE(status.message().find("tensor_maps: cpp kernels take no tensor maps"),
            std::string::npos)
      << status.message();
}

TEST_F(HostToolchainTest, RefusesAnArchOtherThanHost) {
  spec_.mutable_target()->set_arch("host");
  EXPECT_TRUE(host_->Validate(spec_).ok()) << host_->Validate(spec_).message();
  spec_.mutable_target()->set_arch("sm_90");
  Status status = host_->Validate(spec_);
  EXPECT_EQ(status.code(), Code::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "target.arch: 'sm_90': cpp kernels are built for the CPU they run on, arch host");
}

TEST_F(HostToolchainTest, RefusesOptionsOutsideTheAllowlistByName) {
  for (std::string option :
       {"-fplugin=evil.so", "-Wl,-rpath,/tmp", "-o", "-I/etc", "-I../x", "-DX=\"quoted\"",
        "--param=max-inline-insns-auto=1", "-save-temps", "-wrapper", "-B/tmp/evil", "@/etc/passwd",
        "-specs=evil", "-fuse-ld=/tmp/ld", "-DX=$(id)", "-include/etc/passwd"}) {
    spec_.clear_compile_options();
    spec_.add_compile_options("-O2");
    spec_.add_compile_options(option);
    Status status = host_->Validate(spec_);
    EXPECT_EQ(status.code(), Code::kInvalidArgument) << option;
    EXPECT_NE(status.message().find("'" + option + "'"), std::string::npos) << status.message();
  }
}

// The compiler runs in a box holding the toolchain and the job's folder: a
// source that pulls in a host file gets a clear error, and nothing of the
// file reaches the diagnostics.
TEST_F(HostToolchainTest, HostFilesOutsideTheJobCannotBeIncluded) {
  auto passwd = ReadFile("/etc/passwd");
  ASSERT_TRUE(passwd.ok());
  auto dir = MakeTempDir("host_toolchain_test-");
  ASSERT_TRUE(dir.ok());
  ASSERT_TRUE(MakeDirs(*dir + "/kernels").ok());
  spec_.mutable_verify()->clear_reference();
  for (std::string pull : {"#include \"/etc/passwd\"", "#include \"../../../../../../etc/passwd\"",
                           "#include </etc/passwd>", "asm(\".incbin \\\"/etc/passwd\\\"\");"}) {
    ASSERT_TRUE(WriteFileAtomic(*dir + "/kernels/scale.h",
                                pull + "\ntemplate <int U> void scale(const _Float16*, int*, "
                                       "long, long) {}\n")
                    .ok());
    auto tu = host_->GenerateBatch(spec_, {}, {Config(1)});
    ASSERT_TRUE(tu.ok());
    ASSERT_TRUE(WriteFileAtomic(*dir + "/batch.cc", *tu).ok());
    auto outcome = host_->Compile(*dir, "batch.cc", "batch.so", spec_, {Config(1)}, 60);
    ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
    EXPECT_FALSE(outcome->ok) << pull;
    // cc1plus says "Permission denied"; the assembler, for .incbin, "file not found".
    EXPECT_TRUE(outcome->diagnostics.find("/etc/passwd: Permission denied") != std::string::npos ||
                outcome->diagnostics.find("file not found: /etc/passwd") != std::string::npos)
        << pull << "\n"
        << outcome->diagnostics;
    std::istringstream lines(*passwd);
    for (std::string line; std::getline(lines, line);) {
      EXPECT_EQ(outcome->diagnostics.find(line.substr(0, line.find(':', line.find(':') + 1))),
                std::string::npos)
          << pull << " leaked '" << line << "':\n"
          << outcome->diagnostics;
    }
  }
  std::filesystem::remove_all(*dir);
}

}  // namespace
}  // namespace tf::cpu
