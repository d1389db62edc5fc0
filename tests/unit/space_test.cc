#include "kernelspec/space.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "kernelspec/config.h"
#include "kernelspec/params.h"

namespace tf::kernelspec {
namespace {

using ::testing::HasSubstr;

v1::Param* AddParam(v1::KernelSpec* spec, const std::string& name,
                    std::initializer_list<int64_t> values) {
  v1::Param* param = spec->add_params();
  param->set_name(name);
  for (int64_t v : values) *param->add_values() = kernelspec::IntValue(v);
  return param;
}

v1::Param* AddRange(v1::KernelSpec* spec, const std::string& name, int64_t start, int64_t stop) {
  v1::Param* param = spec->add_params();
  param->set_name(name);
  param->mutable_range()->set_start(start);
  param->mutable_range()->set_stop(stop);
  param->mutable_range()->set_step(1);
  return param;
}

v1::Problem Problem(const std::string& text) { return *kernelspec::ParseProblem(text); }

// A GEMM-like spec whose constraints become decidable at different depths,
// one of them on a string parameter, one dividing by a parameter.
v1::KernelSpec GemmSpec() {
  v1::KernelSpec spec;
  AddParam(&spec, "BM", {16, 32, 64, 128});
  AddParam(&spec, "BN", {16, 32, 64, 128});
  AddParam(&spec, "SPLIT", {0, 1, 2, 4});
  v1::Param* dt = spec.add_params();
  dt->set_name("DT");
  *dt->add_values() = kernelspec::StrValue("f16");
  *dt->add_values() = kernelspec::StrValue("f32");
  AddParam(&spec, "STAGES", {1, 2, 3});
  for (const char* c : {"BM * BN * 4 <= device.max_smem", "K % SPLIT == 0 && K / SPLIT >= BM",
                        "DT == 'f16' || BM * BN <= 2048", "STAGES * BM <= 256 || DT == 'f16'"}) {
    spec.add_constraints(c);
  }
  return spec;
}

// The reference: every cartesian configuration, filtered with Expr::Eval.
std::vector<std::string> BruteForce(const v1::KernelSpec& spec, const v1::Problem& problem,
                                    const DeviceProperties& device) {
  std::vector<std::vector<v1::Value>> values;
  for (const auto& param : spec.params()) values.push_back(*kernelspec::ParamValues(param));
  kernelspec::Bindings base;
  for (const auto& var : problem.vars()) base[var.name()] = var.value();
  for (const auto& [name, value] : device) base["device." + name] = value;
  std::vector<std::string> keys;
  std::vector<size_t> index(values.size(), 0);
  while (true) {
    kernelspec::Bindings vars = base;
    v1::Config config;
    for (size_t p = 0; p < values.size(); ++p) {
      const v1::Value& v = values[p][index[p]];
      auto* setting = config.add_settings();
      setting->set_name(spec.params(p).name());
      *setting->mutable_value() = v;
      vars[spec.params(p).name()] = v.kind_case() == v1::Value::kStrValue
                                        ? kernelspec::Scalar(v.str_value())
                                        : kernelspec::Scalar(v.int_value());
    }
    bool valid = true;
    for (const auto& text : spec.constraints()) {
      auto result = kernelspec::Expr::Parse(text)->Eval(vars);
      valid = valid && result.ok() && kernelspec::IsTrue(*result);
    }
    if (valid) keys.push_back(kernelspec::ConfigKey(config));
    size_t p = values.size();
    while (p > 0 && ++index[p - 1] == values[p - 1].size()) index[--p] = 0;
    if (p == 0) return keys;
  }
}

std::vector<std::string> Keys(const std::vector<v1::Config>& configs) {
  std::vector<std::string> keys;
  for (const auto& config : configs) keys.push_back(kernelspec::ConfigKey(config));
  return keys;
}

std::vector<std::string> EnumeratedKeys(const SearchSpace& space) {
  std::vector<std::string> keys;
  space.Enumerate([&](const v1::Config& config) {
    keys.push_back(kernelspec::ConfigKey(config));
    return true;
  });
  return keys;
}

const DeviceProperties kDevice = {{"max_smem", 49152}};

TEST(SearchSpaceTest, PruningMatchesBruteForceInOdometerOrder) {
  v1::KernelSpec spec = GemmSpec();
  for (const char* problem_text : {"M=512,K=256", "M=512,K=96", "M=64,K=7"}) {
    v1::Problem problem = Problem(problem_text);
    auto space = SearchSpace::Create(spec, problem, kDevice);
    ASSERT_TRUE(space.ok()) << space.status().ToString();
    std::vector<std::string> expected = BruteForce(spec, problem, kDevice);
    EXPECT_EQ(EnumeratedKeys(*space), expected) << problem_text;
    EXPECT_EQ(space->CountValid(), expected.size()) << problem_text;
    EXPECT_EQ(space->CartesianSize(), 4u * 4 * 4 * 2 * 3);
  }
}

TEST(SearchSpaceTest, OrderIsOdometerWithTheLastParameterFastest) {
  v1::KernelSpec spec;
  AddParam(&spec, "A", {1, 2});
  AddParam(&spec, "B", {10, 20, 30});
  auto space = SearchSpace::Create(spec, Problem("N=1"), {});
  ASSERT_TRUE(space.ok());
  EXPECT_THAT(EnumeratedKeys(*space), ::testing::ElementsAre("A=1,B=10", "A=1,B=20", "A=1,B=30",
                                                             "A=2,B=10", "A=2,B=20", "A=2,B=30"));
}

TEST(SearchSpaceTest, EnumerationStopsWhenAsked) {
  auto space = SearchSpace::Create(GemmSpec(), Problem("M=512,K=256"), kDevice);
  ASSERT_TRUE(space.ok());
  int visited = 0;
  space->Enumerate([&](const v1::Config&) { return ++visited < 3; });
  EXPECT_EQ(visited, 3);
}

TEST(SearchSpaceTest, IndicesAndConfigsAgree) {
  auto space = SearchSpace::Create(GemmSpec(), Problem("M=512,K=256"), kDevice);
  ASSERT_TRUE(space.ok());
  std::vector<std::string> keys;
  space->EnumerateIndices([&](const uint32_t* index) {
    keys.push_back(kernelspec::ConfigKey(space->MakeConfig(index)));
    return true;
  });
  EXPECT_EQ(keys, EnumeratedKeys(*space));
}

// Every configuration of the cartesian product satisfies the constraints exactly when
// the brute force keeps it.
TEST(SearchSpaceTest, SatisfiesAgreesWithTheBruteForce) {
  const v1::KernelSpec spec = GemmSpec();
  auto space = SearchSpace::Create(spec, Problem("M=512,K=256"), kDevice);
  ASSERT_TRUE(space.ok());
  const std::vector<std::string> valid = BruteForce(spec, Problem("M=512,K=256"), kDevice);
  const std::set<std::string> kept(valid.begin(), valid.end());
  std::vector<uint32_t> sizes, index;
  for (const auto& param : spec.params()) sizes.push_back(kernelspec::ParamValues(param)->size());
  index.assign(sizes.size(), 0);
  size_t checked = 0, satisfied = 0;
  while (true) {
    const std::string key = kernelspec::ConfigKey(space->MakeConfig(index.data()));
    const bool satisfies = space->Satisfies(index.data());
    EXPECT_EQ(satisfies, kept.count(key) == 1) << key;
    satisfied += satisfies;
    ++checked;
    size_t p = sizes.size();
    while (p > 0 && ++index[p - 1] == sizes[p - 1]) index[--p] = 0;
    if (p == 0) break;
  }
  EXPECT_EQ(checked, 4u * 4 * 4 * 2 * 3);
  EXPECT_EQ(satisfied, valid.size());
  EXPECT_GT(satisfied, 0u);
}

TEST(SearchSpaceTest, CountValidMultipliesUnconstrainedParameters) {
  v1::KernelSpec spec;
  AddRange(&spec, "A", 1, 100);
  AddRange(&spec, "B", 1, 1000);
  AddRange(&spec, "C", 1, 1000);
  AddRange(&spec, "D", 1, 1000);
  spec.add_constraints("A % 10 == 0");
  auto space = SearchSpace::Create(spec, Problem("N=1"), {});
  ASSERT_TRUE(space.ok());
  EXPECT_EQ(space->CountValid(), uint64_t{10} * 1000 * 1000 * 1000);
}

TEST(SearchSpaceTest, ConstraintsWithoutParametersDecideTheWholeSpace) {
  v1::KernelSpec spec = GemmSpec();
  spec.add_constraints("M >= 128");
  auto small = SearchSpace::Create(spec, Problem("M=64,K=256"), kDevice);
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(small->CountValid(), 0u);
  EXPECT_TRUE(EnumeratedKeys(*small).empty());
  auto large = SearchSpace::Create(spec, Problem("M=512,K=256"), kDevice);
  ASSERT_TRUE(large.ok());
  EXPECT_GT(large->CountValid(), 0u);
}

TEST(SearchSpaceTest, UnknownDevicePropertyIsNamed) {
  auto space = SearchSpace::Create(GemmSpec(), Problem("M=512,K=256"), {{"sm_count", 132}});
  ASSERT_FALSE(space.ok());
  EXPECT_EQ(
      space.status().message(),
      "constraints[0]: 'BM * BN * 4 <= device.max_smem': device property 'max_smem' is unknown "
      "for this device; known: sm_count");
}

TEST(SearchSpaceTest, UnknownVariableIsNamed) {
  v1::KernelSpec spec = GemmSpec();
  auto space = SearchSpace::Create(spec, Problem("M=512"), kDevice);
  ASSERT_FALSE(space.ok());
  EXPECT_THAT(
      space.status().message(),
      HasSubstr("constraints[1]: 'K % SPLIT == 0 && K / SPLIT >= BM': unknown variable 'K'"));
}

TEST(SearchSpaceTest, SelectsAllOrRefusesUnlessSampled) {
  v1::KernelSpec spec = GemmSpec();
  auto space = SearchSpace::Create(spec, Problem("M=512,K=256"), kDevice);
  ASSERT_TRUE(space.ok());
  v1::Search search;
  search.set_strategy("auto");
  search.set_max_candidates(2);  // a budget for the strategy, not a cap on the space
  auto all = space->Select(search, 1000);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(Keys(*all), EnumeratedKeys(*space));
  auto too_many = space->Select(search, 3);
  ASSERT_FALSE(too_many.ok());
  EXPECT_THAT(too_many.status().message(), HasSubstr("more than the limit of 3"));
}

void ExpectValidDistinctSample(const std::vector<std::string>& sample,
                               const std::set<std::string>& valid, size_t size) {
  EXPECT_EQ(sample.size(), size);
  EXPECT_EQ(std::set<std::string>(sample.begin(), sample.end()).size(), sample.size())
      << "duplicates";
  for (const auto& key : sample) EXPECT_TRUE(valid.count(key)) << key << " is not valid";
}

TEST(SearchSpaceTest, RandomSampleIsDeterministicDistinctAndValid) {
  v1::KernelSpec spec = GemmSpec();
  auto space = SearchSpace::Create(spec, Problem("M=512,K=256"), kDevice);
  ASSERT_TRUE(space.ok());
  std::vector<std::string> all = EnumeratedKeys(*space);
  ASSERT_GT(all.size(), 20u);
  std::set<std::string> valid(all.begin(), all.end());

  v1::Search search;
  search.set_strategy("random");
  search.set_max_candidates(10);
  search.set_seed(42);
  auto first = space->Select(search, 1000);
  auto again = space->Select(search, 1000);
  ASSERT_TRUE(first.ok() && again.ok());
  ExpectValidDistinctSample(Keys(*first), valid, 10);
  EXPECT_EQ(Keys(*first), Keys(*again));

  search.set_seed(43);
  auto other = space->Select(search, 1000);
  ASSERT_TRUE(other.ok());
  EXPECT_NE(Keys(*other), Keys(*first));

  auto capped = space->Select(search, 4);
  ASSERT_TRUE(capped.ok());
  EXPECT_EQ(capped->size(), 4u) << "the limit caps the budget";

  search.set_max_candidates(100000);
  auto whole = space->Select(search, 1000000);
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(Keys(*whole), all) << "a budget above the space size takes all of it";
}

TEST(SearchSpaceTest, RandomSampleIsRoughlyUniform) {
  v1::KernelSpec spec;
  AddRange(&spec, "A", 0, 9);
  AddRange(&spec, "B", 0, 9);
  AddRange(&spec, "C", 0, 2);      // free: the sampler decodes it from the rank
  spec.add_constraints("A != B");  // 270 valid
  auto space = SearchSpace::Create(spec, Problem("N=1"), {});
  ASSERT_TRUE(space.ok());
  std::map<std::string, int> hits;
  v1::Search search;
  search.set_strategy("random");
  search.set_max_candidates(27);
  for (uint64_t seed = 0; seed < 1000; ++seed) {
    search.set_seed(seed);
    for (const auto& key : Keys(*space->Select(search, 1000))) ++hits[key];
  }
  ASSERT_EQ(hits.size(), 270u);
  for (const auto& [key, count] : hits) {
    EXPECT_GT(count, 50) << key;  // expected 100 each
    EXPECT_LT(count, 150) << key;
  }
}

TEST(SearchSpaceTest, HugeSpacesAreSampledByRejection) {
  v1::KernelSpec spec;
  AddRange(&spec, "A", 1, 4096);
  AddRange(&spec, "B", 1, 4096);
  AddRange(&spec, "C", 1, 4096);
  spec.add_constraints("(A + B + C) % 3 == 0");  // decided only at the last parameter
  auto space = SearchSpace::Create(spec, Problem("N=1"), {});
  ASSERT_TRUE(space.ok());
  v1::Search search;
  search.set_strategy("random");
  search.set_max_candidates(200);
  search.set_seed(5);
  auto sample = space->Select(search, 1000);
  auto again = space->Select(search, 1000);
  ASSERT_TRUE(sample.ok() && again.ok());
  std::vector<std::string> keys = Keys(*sample);
  EXPECT_EQ(keys, Keys(*again));
  EXPECT_EQ(keys.size(), 200u);
  EXPECT_EQ(std::set<std::string>(keys.begin(), keys.end()).size(), 200u);
  for (const auto& config : *sample) {
    int64_t sum = 0;
    for (const auto& s : config.settings()) sum += s.value().int_value();
    EXPECT_EQ(sum % 3, 0) << kernelspec::ConfigKey(config);
  }
}

TEST(SearchSpaceTest, UnevaluableConstraintExcludesTheConfiguration) {
  v1::KernelSpec spec;
  AddParam(&spec, "D", {0, 2, 4});
  spec.add_constraints("8 / D >= 2");
  auto space = SearchSpace::Create(spec, Problem("N=1"), {});
  ASSERT_TRUE(space.ok());
  EXPECT_THAT(EnumeratedKeys(*space), ::testing::ElementsAre("D=2", "D=4"));
}

}  // namespace
}  // namespace tf::kernelspec
