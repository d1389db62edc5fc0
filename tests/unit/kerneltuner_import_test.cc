#include "client/kerneltuner_import.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "common/files.h"
#include "kernelspec/config.h"
#include "kernelspec/space.h"
#include "kernelspec/spec_loader.h"
#include "kernelspec/validate.h"
#include "search/recorded_space.h"
#include "tests/test_util.h"
#include "vendors/toolchains.h"

namespace tf::client {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

const std::string kFolder = "tests/data/spaces/convolution/";

std::string T1Text() {
  auto text = ReadFile(testing::SourcePath(kFolder + "convolution_milo_T1.json"));
  EXPECT_TRUE(text.ok()) << text.status().ToString();
  return text.ok() ? *text : "";
}

// "b=2,a=1" and "a=1,b=2" name the same configuration.
std::string Canonical(const std::string& key) {
  std::vector<std::string> parts;
  std::istringstream in(key);
  for (std::string part; std::getline(in, part, ',');) parts.push_back(part);
  std::sort(parts.begin(), parts.end());
  std::string out;
  for (const std::string& part : parts) out += part + ";";
  return out;
}

kernelspec::LoadedSpec Load(const ImportedSpec& imported) {
  auto loaded = kernelspec::LoadSpec(imported.yaml, "imported.yaml", testing::SourcePath(kFolder));
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString() << "\n" << imported.yaml;
  return loaded.ok() ? *loaded : kernelspec::LoadedSpec{};
}

TEST(KernelTunerImportTest, ConvolutionSpaceIsTheRecordedOne) {
  auto imported = ImportKernelTunerT1(T1Text(), "convolution_milo_T1.json", "convolution_milo.cu",
                                      vendors::Languages());
  ASSERT_TRUE(imported.ok()) << imported.status().ToString();
  kernelspec::LoadedSpec loaded = Load(*imported);
  ASSERT_TRUE(kernelspec::ValidateSpec(loaded.spec, loaded.sources, kernelspec::SpecLimits()).ok())
      << kernelspec::ValidateSpec(loaded.spec, loaded.sources, kernelspec::SpecLimits()).message();
  const v1::KernelSpec& spec = loaded.spec;
  EXPECT_EQ(spec.param_style(), "define");
  EXPECT_EQ(spec.entry(), "convolution_kernel");
  EXPECT_EQ(spec.params_size(), 10);
  EXPECT_EQ(spec.constraints_size(), 4);
  ASSERT_EQ(spec.buffers_size(), 3);
  EXPECT_TRUE(spec.buffers(0).output());
  EXPECT_EQ(spec.buffers(0).count(), std::to_string(4096 * 4096));
  EXPECT_EQ(spec.buffers(1).count(), std::to_string((4096 + 15 - 1) * (4096 + 15 - 1)));
  EXPECT_EQ(spec.buffers(2).count(), "225");
  EXPECT_EQ(spec.buffers(2).memory(), "constant");
  EXPECT_EQ(spec.launch().grid(0), "ceil_div(problem_size_x, (block_size_x) * (tile_size_x))");
  EXPECT_EQ(spec.launch().block(1), "block_size_y");
  EXPECT_THAT(spec.compile_options(), ::testing::ElementsAre("-std=c++17"));

  auto space = kernelspec::SearchSpace::Create(spec, spec.problems(0), {});
  ASSERT_TRUE(space.ok()) << space.status().ToString();
  EXPECT_EQ(space->CountValid(), 4362u);

  // The very configurations the A100 run recorded, no more, no fewer.
  auto recorded = search::ReadRecordedSpace(testing::SourcePath(kFolder + "A100_T4.json.gz"));
  ASSERT_TRUE(recorded.ok()) << recorded.status().ToString();
  std::set<std::string> expected;
  for (search::ConfigId id = 0; id < recorded->space.size(); ++id) {
    expected.insert(Canonical(recorded->space.Describe(id)));
  }
  std::set<std::string> enumerated;
  space->Enumerate([&](const v1::Config& config) {
    enumerated.insert(Canonical(kernelspec::ConfigKey(config)));
    return true;
  });
  EXPECT_EQ(expected.size(), 4362u);
  EXPECT_TRUE(enumerated == expected);
}

TEST(KernelTunerImportTest, ReferenceBecomesAVerifyKernel) {
  auto imported = ImportKernelTunerT1(T1Text(), "t1.json", "convolution_milo.cu",
                                      vendors::Languages(), "convolution_naive");
  ASSERT_TRUE(imported.ok()) << imported.status().ToString();
  kernelspec::LoadedSpec loaded = Load(*imported);
  EXPECT_EQ(loaded.spec.verify().reference(), "convolution_naive");
  EXPECT_THAT(loaded.spec.verify().block(), ::testing::ElementsAre("16", "16"));
  EXPECT_TRUE(kernelspec::ValidateSpec(loaded.spec, loaded.sources, kernelspec::SpecLimits()).ok());
}

// Each edit of the T1 file, and the field its error must name.
TEST(KernelTunerImportTest, UntranslatableFieldsAreNamed) {
  const json original = json::parse(T1Text());
  struct Case {
    std::function<void(json&)> edit;
    std::string field;
  };
  const Case cases[] = {
      {[](json& t1) { t1["KernelSpecification"]["Arguments"][1]["FillType"] = "Sequence"; },
       "KernelSpecification.Arguments[1] (input_image).FillType"},
      {[](json& t1) { t1["KernelSpecification"]["Arguments"][0]["FillValue"] = 2.5; },
       "KernelSpecification.Arguments[0] (output_image).FillValue"},
      {[](json& t1) { t1["KernelSpecification"]["Arguments"][2]["MemoryType"] = "Scalar"; },
       "KernelSpecification.Arguments[2] (d_filter).MemoryType"},
      {[](json& t1) { t1["KernelSpecification"]["Arguments"][0]["Size"] = "ProblemSize[7]"; },
       "KernelSpecification.Arguments[0] (output_image).Size"},
      {[](json& t1) { t1["KernelSpecification"]["Language"] = "OpenCL"; },
       "KernelSpecification.Language"},
      {[](json& t1) { t1["KernelSpecification"]["TextureMemory"] = json::array(); },
       "KernelSpecification.TextureMemory"},
      {[](json& t1) { t1["ConfigurationSpace"]["TuningParameters"][2]["Values"] = "[0.5, 1.5]"; },
       "ConfigurationSpace.TuningParameters[2].Values (tile_size_x)"},
      {[](json& t1) { t1["ConfigurationSpace"]["TuningParameters"][0]["Values"] = "[1, "; },
       "ConfigurationSpace.TuningParameters[0].Values (block_size_x)"},
      {[](json& t1) { t1["ConfigurationSpace"]["Conditions"][1]["Expression"] = "a <<<< b"; },
       "ConfigurationSpace.Conditions[1].Expression"},
      {[](json& t1) { t1["KernelSpecification"]["GridDivX"] = "block_size_x"; },
       "KernelSpecification.GridDivX"},
  };
  for (const Case& c : cases) {
    json t1 = original;
    c.edit(t1);
    auto imported =
        ImportKernelTunerT1(t1.dump(), "t1.json", "convolution_milo.cu", vendors::Languages());
    ASSERT_FALSE(imported.ok()) << c.field;
    EXPECT_THAT(imported.status().message(), HasSubstr(c.field + ":"));
  }
}

TEST(KernelTunerImportTest, PythonValuesAndConditions) {
  json t1 = json::parse(T1Text());
  t1["ConfigurationSpace"]["TuningParameters"][0]["Values"] = "[16 * i for i in range(1, 5)]";
  t1["ConfigurationSpace"]["TuningParameters"][1]["Values"] = "[1, 2] + list(range(4, 9, 4))";
  t1["ConfigurationSpace"]["Conditions"] = json::array(
      {{{"Expression", "32 <= block_size_x * block_size_y <= 256 and tile_size_x not in [3]"}}});
  auto imported =
      ImportKernelTunerT1(t1.dump(), "t1.json", "convolution_milo.cu", vendors::Languages());
  ASSERT_TRUE(imported.ok()) << imported.status().ToString();
  kernelspec::LoadedSpec loaded = Load(*imported);
  EXPECT_EQ(loaded.spec.params(0).values_size(), 4);
  EXPECT_EQ(loaded.spec.params(1).values(3).int_value(), 8);
  auto space = kernelspec::SearchSpace::Create(loaded.spec, loaded.spec.problems(0), {});
  ASSERT_TRUE(space.ok()) << space.status().ToString();
  // By hand: (bx, by) pairs with 32 <= bx*by <= 256 over bx in {16,32,48,64},
  // by in {1,2,4,8}: 13 of 16; tile_size_x 3 of 4 values; the rest free.
  EXPECT_EQ(space->CountValid(), 13u * 3 * 4 * 2 * 2 * 2);
}

// The command line: a spec written beside a copy of the kernel, its space
// counted by `tunefleet space` without building.
TEST(KernelTunerImportTest, CommandLineImportAndSpace) {
  testing::TempDir dir;
  ProcessResult imported =
      testing::RunCli("127.0.0.1:1", {"import", "kerneltuner",
                                      testing::SourcePath(kFolder + "convolution_milo_T1.json"),
                                      "-o", dir / "conv.yaml"});
  ASSERT_TRUE(imported.success()) << imported.output;
  EXPECT_THAT(imported.output, HasSubstr("copied"));
  EXPECT_EQ(*ReadFile(dir / "convolution_milo.cu"),
            *ReadFile(testing::SourcePath(kFolder + "convolution_milo.cu")));
  ProcessResult space = testing::RunCli("127.0.0.1:1", {"space", dir / "conv.yaml", "--json"});
  ASSERT_TRUE(space.success()) << space.output;
  json report = json::parse(space.output);
  EXPECT_EQ(report["configurations"], 4362);
  EXPECT_EQ(report["problems"][0]["cartesian"], 10240);
  EXPECT_EQ(report["problems"][0]["first"].size(), 5u);

  // With --json, stdout is one JSON object, the spec itself a field when there is no -o.
  ProcessResult as_json =
      testing::RunCli("127.0.0.1:1", {"--json", "import", "kerneltuner",
                                      testing::SourcePath(kFolder + "convolution_milo_T1.json")});
  ASSERT_TRUE(as_json.success()) << as_json.output;
  json described = json::parse(as_json.output);
  EXPECT_EQ(described["kernel"], "convolution_milo");
  EXPECT_EQ(described["yaml"], *ReadFile(dir / "conv.yaml"));
  EXPECT_FALSE(described.contains("spec"));
  ProcessResult to_file =
      testing::RunCli("127.0.0.1:1", {"--json", "import", "kerneltuner",
                                      testing::SourcePath(kFolder + "convolution_milo_T1.json"),
                                      "-o", dir / "again.yaml"});
  ASSERT_TRUE(to_file.success()) << to_file.output;
  EXPECT_EQ(json::parse(to_file.output)["spec"], dir / "again.yaml");
  EXPECT_FALSE(json::parse(to_file.output).contains("yaml"));

  ProcessResult bad = testing::RunCli("127.0.0.1:1", {"import", "kerneltuner", dir / "conv.yaml"});
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_THAT(bad.output, HasSubstr("not a JSON object"));

  // A T1 file naming a file outside its folder gets no copy of it.
  std::string t1 = *ReadFile(testing::SourcePath(kFolder + "convolution_milo_T1.json"));
  t1.replace(t1.find("\"convolution_milo.cu\""), 21, "\"../../../etc/passwd\"");
  ASSERT_TRUE(WriteFileAtomic(dir / "escaping_T1.json", t1).ok());
  ProcessResult escaping = testing::RunCli(
      "127.0.0.1:1", {"import", "kerneltuner", dir / "escaping_T1.json", "-o", dir / "x.yaml"});
  EXPECT_EQ(escaping.exit_code, 2) << escaping.output;
  EXPECT_THAT(escaping.output, HasSubstr("KernelSpecification.KernelFile: '../../../etc/passwd' "
                                         "is not a relative path inside the T1 file's folder"));
  EXPECT_FALSE(std::filesystem::exists(dir / "passwd"));
}

}  // namespace
}  // namespace tf::client
