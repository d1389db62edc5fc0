// A toolchain's compiler version (compiler/tool_version.h), from stand-in
// programs.
#include "compiler/tool_version.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "common/files.h"

namespace tf::compiler {
namespace {

// An executable script at DIR/NAME running `body`.
std::string Script(const std::string& dir, const std::string& name, const std::string& body) {
  const std::string path = dir + "/" + name;
  EXPECT_TRUE(WriteFileAtomic(path, "#!/bin/sh\n" + body + "\n").ok());
  chmod(path.c_str(), 0755);
  return path;
}

TEST(ToolVersionTest, TheFirstLineOfWhatTheProgramPrints) {
  auto dir = MakeTempDir("tool_version-");
  ASSERT_TRUE(dir.ok()) << dir.status().ToString();
  const std::string tool =
      Script(*dir, "tool", "[ \"$1\" = --version ] || exit 3; echo 'tool 1.2.3'; echo 'more'");
  auto version = ToolVersion(tool);
  ASSERT_TRUE(version.ok()) << version.status().ToString();
  EXPECT_EQ(*version, "tool 1.2.3");
  std::filesystem::remove_all(*dir);
}

TEST(ToolVersionTest, AFailingProgramGivesItsOutput) {
  auto dir = MakeTempDir("tool_version-");
  ASSERT_TRUE(dir.ok()) << dir.status().ToString();
  auto version = ToolVersion(Script(*dir, "broken", "echo 'no licence found'; exit 1"));
  EXPECT_EQ(version.status().code(), Code::kUnavailable);
  EXPECT_NE(version.status().message().find("no licence found"), std::string::npos)
      << version.status().message();
  std::filesystem::remove_all(*dir);
}

TEST(ToolVersionTest, AMissingProgramIsUnavailable) {
  auto version = ToolVersion("/nonexistent/tf-no-such-compiler");
  EXPECT_EQ(version.status().code(), Code::kUnavailable);
  EXPECT_FALSE(version.status().message().empty());
}

}  // namespace
}  // namespace tf::compiler
