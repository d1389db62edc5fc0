// Tuning results in and out, through the real programs: recorded runs of the
// convolution kernel (tests/data/spaces/convolution, Kernel Tuner's T4 and
// cache formats) imported into a real coordinator answer `tunefleet best`
// with the recorded optimum and warm start a job of the kernel on another
// device; `tunefleet export` writes JSON that the C++ client answers from
// offline, and a C++ header that g++ compiles and whose lookup answers as
// `best` does, nearest problem included; `tunefleet kernels` lists what is
// tuned, with the token name each kernel name belongs to, which an admin
// hands to another team or to no one.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <ctime>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "client/best_config_cache.h"
#include "client/results_client.h"
#include "common/files.h"
#include "kernelspec/config.h"
#include "search/transfer.h"
#include "tests/test_util.h"

namespace tf::testing {
namespace {

namespace v1 = ::tunefleet::v1;
using Json = nlohmann::ordered_json;
using std::chrono::seconds;

const char* const kSpaces = "tests/data/spaces/convolution/";
const char* const kProblem = "problem_size_x=4096,problem_size_y=4096";
// The kernel and problem of convolution_replay.yaml, which replay workers run.
const char* const kReplayKernel = "convolution_replay";
const char* const kReplayProblem = "image_width=4096,image_height=4096";

std::string Gunzip(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  EXPECT_NE(file, nullptr) << path;
  std::string text;
  char buffer[1 << 16];
  int n;
  while ((n = gzread(file, buffer, sizeof buffer)) > 0) text.append(buffer, n);
  gzclose(file);
  return text;
}

using Config = std::map<std::string, int64_t>;

// The times of a T4 file's correct results, read here from its JSON: each
// result's first objective.
std::map<Config, double> T4Times(const std::string& relative, size_t* results = nullptr) {
  Json t4 = Json::parse(Gunzip(SourcePath(relative)));
  std::map<Config, double> times;
  if (results) *results = t4["results"].size();
  for (const Json& r : t4["results"]) {
    if (r["invalidity"] != "correct") continue;
    const std::string objective = r["objectives"][0];
    Config config;
    for (const auto& [name, value] : r["configuration"].items()) {
      config[name] = value.get<int64_t>();
    }
    for (const Json& m : r["measurements"]) {
      if (m["name"] == objective) times[config] = m["value"].get<double>();
    }
  }
  return times;
}

// The optimum of a T4 file: the correct result with the smallest first objective.
struct Optimum {
  Config config;
  double time_ms = 1e300;
  size_t results = 0;
};

Optimum T4Optimum(const std::string& relative) {
  Optimum optimum;
  for (const auto& [config, time] : T4Times(relative, &optimum.results)) {
    if (time < optimum.time_ms) optimum = {config, time, optimum.results};
  }
  return optimum;
}

Config ConfigOf(const Json& config) {
  Config out;
  for (const auto& [name, value] : config.items()) out[name] = value.get<int64_t>();
  return out;
}

// What a command printed, as JSON (stderr notes before it skipped).
Json Output(const ProcessResult& result) {
  const size_t start = result.output.find_first_of("{[");
  if (start == std::string::npos) return Json();
  return Json::parse(result.output.substr(start), nullptr, false);
}

class ResultsIoTest : public ::testing::TestWithParam<DbKind> {
 protected:
  void SetUp() override {
    coordinator_ = std::make_unique<CoordinatorProcess>(dir_.path(), std::vector<std::string>{},
                                                        database_.location());
    coordinator_->Start();
    // The kernel as `import kerneltuner` names it, from the T1 file beside
    // the recordings.
    ProcessResult spec =
        Cli({"import", "kerneltuner", SourcePath(std::string(kSpaces) + "convolution_milo_T1.json"),
             "-o", dir_ / "convolution.yaml"});
    ASSERT_TRUE(spec.success()) << spec.output;
    auto loaded = kernelspec::LoadSpecFile(dir_ / "convolution.yaml");
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    kernel_ = loaded->spec.name();
    ASSERT_EQ(loaded->spec.problems_size(), 1);
    ASSERT_EQ(kernelspec::ProblemText(loaded->spec.problems(0)), kProblem);
  }

  ProcessResult Cli(std::vector<std::string> args) {
    return RunCli(coordinator_->address(), std::move(args), 300);
  }

  Json Import(const std::string& file, const std::string& device_class,
              const std::string& problem = kProblem) {
    ProcessResult r = Cli({"--json", "import", "results", SourcePath(kSpaces + file), "--kernel",
                           kernel_, "--device-class", device_class, "--problem", problem});
    EXPECT_TRUE(r.success()) << r.output << coordinator_->Log();
    return Output(r);
  }

  std::set<Config> CandidatesOnReplay(const std::string& recording, int budget);

  // The text of a new submitter token named `team`.
  std::string Team(const std::string& team) {
    auto admin = client::Client::Connect(coordinator_->address(), {});
    EXPECT_TRUE(admin.ok()) << admin.status().ToString();
    if (!admin.ok()) return "";
    auto token = (*admin)->CreateToken(team, v1::ROLE_SUBMITTER);
    EXPECT_TRUE(token.ok()) << token.status().ToString();
    return token.ok() ? token->token() : "";
  }

  // A job under `kernel` (queued: no worker runs it) with `token`.
  Status SubmitUnder(const std::string& token, const std::string& kernel) {
    client::ClientOptions options;
    options.token = token;
    auto submitter = client::Client::Connect(coordinator_->address(), options);
    if (!submitter.ok()) return submitter.status();
    kernelspec::LoadedSpec spec = LoadTestSpec("tests/integration/data/slow/slow.yaml",
                                               [&](v1::KernelSpec& s) { s.set_name(kernel); });
    return (*submitter)->Submit(spec.spec, spec.sources, /*priority=*/0).status();
  }

  // A submitter token named `team`, whose job under `kernel` makes the
  // kernel name the team's.
  void Claim(const std::string& team, const std::string& kernel) {
    Status submitted = SubmitUnder(Team(team), kernel);
    ASSERT_TRUE(submitted.ok()) << submitted.ToString();
  }

  Result<v1::SetKernelOwnerResponse> SetOwner(const std::string& kernel, const std::string& team) {
    TF_ASSIGN_OR_RETURN(auto admin, client::Client::Connect(coordinator_->address(), {}));
    return admin->SetKernelOwner(kernel, team);
  }

  // Two results of `kernel` for the problem n=`n` on `device_class`, imported.
  void ImportTwo(const std::string& kernel, const std::string& device_class, int64_t n) {
    v1::ImportResultsRequest request;
    request.set_kernel(kernel);
    request.set_device_class(device_class);
    request.set_source("results_io_test");
    *request.mutable_problem() = *kernelspec::ParseProblem("n=" + std::to_string(n));
    for (int unroll : {1, 2}) {
      v1::ImportedResult* result = request.add_results();
      *result->mutable_config() = *kernelspec::ParseConfigKey("unroll=" + std::to_string(unroll));
      result->set_status(v1::RESULT_STATUS_OK);
      result->mutable_timing()->set_median_ns(1000.0 * unroll);
    }
    auto results = client::ResultsClient::Connect(coordinator_->address(), {});
    ASSERT_TRUE(results.ok()) << results.status().ToString();
    auto imported = (*results)->Import(request);
    ASSERT_TRUE(imported.ok()) << imported.status().ToString();
  }

  // Kills the coordinator and starts it again on its database, then waits
  // for a call to reach it: the first may go to the connection the kill
  // closed.
  void Restart() {
    coordinator_->Kill();
    coordinator_->Start();
    auto results = client::ResultsClient::Connect(coordinator_->address(), {});
    ASSERT_TRUE(results.ok()) << results.status().ToString();
    ASSERT_TRUE(
        WaitFor([&] { return (*results)->ListKernels("").status().code() != Code::kUnavailable; },
                seconds(10)));
  }

  std::vector<v1::TunedKernel> Kernels(const std::string& device_class = "") {
    auto results = client::ResultsClient::Connect(coordinator_->address(), {});
    EXPECT_TRUE(results.ok()) << results.status().ToString();
    if (!results.ok()) return {};
    auto kernels = (*results)->ListKernels(device_class);
    EXPECT_TRUE(kernels.ok()) << kernels.status().ToString();
    return kernels.ok() ? *kernels : std::vector<v1::TunedKernel>();
  }

  Json Best(const std::string& problem, const std::string& device_class) {
    std::vector<std::string> args = {"--json", "best", kernel_, "--problem", problem};
    if (!device_class.empty()) args.insert(args.end(), {"--device", device_class});
    ProcessResult r = Cli(args);
    EXPECT_TRUE(r.success()) << r.output;
    return Output(r);
  }

  TempDir dir_;
  TestDatabase database_{GetParam(), dir_.path()};
  std::unique_ptr<CoordinatorProcess> coordinator_;
  std::string kernel_;
};

TEST_P(ResultsIoTest, ImportedRecordingsAnswerBestWithTheRecordedOptimum) {
  const Optimum optimum = T4Optimum(std::string(kSpaces) + "A100_T4.json.gz");
  ASSERT_EQ(optimum.results, 4362u);

  Json t4 = Import("A100_T4.json.gz", "a100-t4");
  EXPECT_EQ(t4["imported"], 4362);
  EXPECT_GT(t4["job_id"].get<int64_t>(), 0);
  Json best = Best(kProblem, "a100-t4");
  EXPECT_EQ(ConfigOf(best["config"]), optimum.config);
  EXPECT_NEAR(best["median_ns"].get<double>(), optimum.time_ms * 1e6, 1e-3);
  EXPECT_EQ(best["exact"], true);

  // The same run as a Kernel Tuner cache file: the same optimum, and the
  // device named as the file names it.
  Json cache = Import("A100_kerneltuner_cache.json.gz", "a100-cache");
  EXPECT_EQ(cache["device"], "NVIDIA A100-PCIE-40GB");
  EXPECT_EQ(ConfigOf(Best(kProblem, "a100-cache")["config"]), optimum.config);

  // The imported job lists every result, best first, marked with the device.
  auto client = client::Client::Connect(coordinator_->address(), {});
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  auto listed = (*client)->ListResults(cache["job_id"].get<int64_t>());
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  ASSERT_EQ(listed->size(), cache["imported"].get<size_t>());
  EXPECT_EQ((*listed)[0].worker(), "imported: NVIDIA A100-PCIE-40GB");
  ProcessResult table = Cli({"results", cache["job_id"].dump()});
  EXPECT_NE(table.output.find("imported: NVIDIA A100-PCIE-40GB"), std::string::npos)
      << table.output;
  std::map<std::string, int64_t> first;
  for (const auto& s : (*listed)[0].config().settings()) first[s.name()] = s.value().int_value();
  EXPECT_EQ(first, optimum.config);

  // Both survive a restart: the best index is rebuilt from the database.
  coordinator_->Kill();
  coordinator_->Start();
  EXPECT_EQ(ConfigOf(Best(kProblem, "a100-t4")["config"]), optimum.config);
}

TEST_P(ResultsIoTest, BadFilesAreRefusedNamingTheFileAndNothingIsStored) {
  const std::string bad = dir_ / "bad_T4.json";
  ASSERT_TRUE(WriteFileAtomic(bad, R"({"schema_version": "1.0.0", "results": [
    {"configuration": {"a": 1}, "invalidity": "correct", "objectives": ["time"],
     "measurements": [{"name": "time", "value": 1.5, "unit": ""}], "times": {}},
    {"configuration": {"b": 2}, "invalidity": "correct", "objectives": ["time"],
     "measurements": [{"name": "time", "value": 1.0, "unit": ""}], "times": {}}]})")
                  .ok());
  ProcessResult r = Cli({"import", "results", bad, "--kernel", kernel_, "--device-class", "x",
                         "--problem", kProblem});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("bad_T4.json"), std::string::npos) << r.output;

  // A file that names its problem (as TuneFleet's T4 export does) is not
  // stored under another: it was, with exit 0, answering best for it.
  const std::string named = dir_ / "named_T4.json";
  ASSERT_TRUE(WriteFileAtomic(named, R"({"schema_version": "1.0.0", "results": [
    {"configuration": {"a": 1}, "invalidity": "correct", "objectives": ["time"],
     "problem": {"N": 65536},
     "measurements": [{"name": "time", "value": 1.5, "unit": ""}], "times": {}}]})")
                  .ok());
  ProcessResult relabelled = Cli({"import", "results", named, "--kernel", kernel_, "--device-class",
                                  "x", "--problem", "N=1000"});
  EXPECT_EQ(relabelled.exit_code, 2) << relabelled.output;
  EXPECT_NE(relabelled.output.find("named_T4.json records N=65536, not --problem N=1000"),
            std::string::npos)
      << relabelled.output;

  ProcessResult no_problem =
      Cli({"import", "results", SourcePath(std::string(kSpaces) + "A100_T4.json.gz"), "--kernel",
           kernel_, "--device-class", "x", "--problem", "4096"});
  EXPECT_EQ(no_problem.exit_code, 2) << no_problem.output;
  EXPECT_NE(no_problem.output.find("--problem"), std::string::npos) << no_problem.output;

  ProcessResult bad_kernel =
      Cli({"import", "results", SourcePath(std::string(kSpaces) + "A100_T4.json.gz"), "--kernel",
           "not a name", "--device-class", "x", "--problem", kProblem});
  EXPECT_EQ(bad_kernel.exit_code, 2) << bad_kernel.output;
  EXPECT_NE(bad_kernel.output.find("kernel: 'not a name'"), std::string::npos) << bad_kernel.output;

  ProcessResult jobs = Cli({"--json", "jobs"});
  ASSERT_TRUE(jobs.success()) << jobs.output;
  EXPECT_TRUE(Output(jobs).empty()) << jobs.output;
  EXPECT_EQ(Cli({"best", kernel_, "--problem", kProblem}).exit_code, 4);

  // Once the kernel answers, an import must name the variables its problems name.
  Import("A100_T4.json.gz", "a100");
  ProcessResult short_problem =
      Cli({"import", "results", SourcePath(std::string(kSpaces) + "W6600_T4.json.gz"), "--kernel",
           kernel_, "--device-class", "rdna", "--problem", "problem_size_x=4096"});
  EXPECT_EQ(short_problem.exit_code, 2) << short_problem.output;
  EXPECT_NE(short_problem.output.find("problem: problem_size_x=4096 names other variables than " +
                                      kernel_ + "'s tuned problems"),
            std::string::npos)
      << short_problem.output;
}

// The results of `tunefleet results JOB --format t4`, one per problem n=`ns`,
// of one configuration of `param`: median 1.5 ms, p10 1.2, p90 1.9.
std::string WriteT4(const std::string& path, const std::string& param, std::vector<int> ns) {
  Json results = Json::array();
  for (int n : ns) {
    Json measurements = Json::array();
    for (auto [name, ms] : {std::pair{"time", 1.5}, {"time_p10", 1.2}, {"time_p90", 1.9}}) {
      measurements.push_back({{"name", name}, {"value", ms}, {"unit", "ms"}});
    }
    results.push_back({{"configuration", {{param, 1}}},
                       {"problem", {{"n", n}}},
                       {"objectives", Json::array({"time"})},
                       {"times", Json::object()},
                       {"invalidity", "correct"},
                       {"correctness", 1},
                       {"measurements", std::move(measurements)}});
  }
  EXPECT_TRUE(
      WriteFileAtomic(path, Json({{"schema_version", "1.0.0"}, {"results", results}}).dump()).ok());
  return path;
}

// The jobs that `tunefleet import results` says it imported as.
std::vector<std::string> ImportedJobs(const std::string& output) {
  std::vector<std::string> jobs;
  const std::regex as_job(" as job ([0-9]+)\n");
  for (std::sregex_iterator it(output.begin(), output.end(), as_job), end; it != end; ++it) {
    jobs.push_back((*it)[1]);
  }
  return jobs;
}

// A kernel answered on a class by a tuning of two problems, then by a newer
// one of one problem (imports of other parameters fingerprint apart): the
// import says what it replaced, and keeps the spread of the runs recorded.
// The same file imported again is refused, naming the import that holds its
// results, and adds no job; a file of other times is imported.
TEST_P(ResultsIoTest, AnImportSaysWhatItReplacesAndIsNotImportedTwice) {
  auto import = [&](const std::string& path) {
    return Cli({"import", "results", path, "--kernel", "spin", "--device-class", "a100"});
  };
  ProcessResult both = import(WriteT4(dir_ / "both_T4.json", "unroll", {1024, 2048}));
  ASSERT_TRUE(both.success()) << both.output;
  EXPECT_EQ(both.output.find("note:"), std::string::npos) << both.output;
  const std::string one_file = WriteT4(dir_ / "one_T4.json", "tile", {1024});
  ProcessResult one = import(one_file);
  ASSERT_TRUE(one.success()) << one.output;
  const std::vector<std::string> first = ImportedJobs(both.output),
                                 second = ImportedJobs(one.output);
  ASSERT_EQ(first.size(), 2u) << both.output;
  ASSERT_EQ(second.size(), 1u) << one.output;
  EXPECT_NE(
      one.output.find("note: spin on a100 was answered by jobs " + first[0] + ", " + first[1] +
                      " (2 tuned problems); from now on this import (job " + second[0] +
                      ") answers for the class, 1 problem: the others answer from the "
                      "nearest of its problems\n"),
      std::string::npos)
      << one.output;

  Json best = Output(Cli({"--json", "best", "spin", "--problem", "n=1024", "--device", "a100"}));
  EXPECT_EQ(best["job_id"].dump(), second[0]);
  EXPECT_NEAR(best["median_ns"].get<double>(), 1.5e6, 1e-3);
  EXPECT_NEAR(best["p10_ns"].get<double>(), 1.2e6, 1e-3);
  EXPECT_NEAR(best["p90_ns"].get<double>(), 1.9e6, 1e-3);

  Restart();  // the earlier import is found in the database as well
  ProcessResult again = import(one_file);
  EXPECT_EQ(again.exit_code, 2) << again.output;
  EXPECT_NE(again.output.find("these results of spin for n=1024 on a100 were imported already, "
                              "as job " +
                              second[0] + " (imported from one_T4.json (t4), recorded on "),
            std::string::npos)
      << again.output;
  ProcessResult jobs = Cli({"--json", "jobs"});
  ASSERT_TRUE(jobs.success()) << jobs.output;
  EXPECT_EQ(Output(jobs).size(), 3u) << jobs.output;

  std::string text = *ReadFile(one_file);
  text.replace(text.find("1.5"), 3, "1.4");
  ASSERT_TRUE(WriteFileAtomic(one_file, text).ok());
  ProcessResult retimed = import(one_file);
  EXPECT_TRUE(retimed.success()) << retimed.output;
}

// Kernels of two teams and one of no one's (imports claim no name): listed
// by name with their owners, their tuned (problem, device class) pairs and
// classes, and when each was last tuned; of one class when asked; the same
// after a restart, rebuilt from the database.
TEST_P(ResultsIoTest, KernelsAreListedByNameWithTheirOwners) {
  EXPECT_TRUE(Kernels().empty());
  Claim("team-a", "alpha_conv");
  Claim("team-b", "beta_conv");
  const int64_t start_ms = NowUnixMs();
  ImportTwo("gamma_conv", "a100", 1024);
  ImportTwo("beta_conv", "a100", 1024);
  ImportTwo("alpha_conv", "a100", 1024);
  ImportTwo("alpha_conv", "a100", 2048);
  const int64_t a100_done_ms = NowUnixMs();
  ImportTwo("alpha_conv", "h100", 1024);
  const int64_t end_ms = NowUnixMs();

  using Classes = std::vector<std::string>;
  auto classes = [](const v1::TunedKernel& k) {
    return Classes(k.device_classes().begin(), k.device_classes().end());
  };
  const std::vector<v1::TunedKernel> all = Kernels();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].name(), "alpha_conv");
  EXPECT_EQ(all[0].owner(), "team-a");
  EXPECT_EQ(all[0].tuned(), 3);
  EXPECT_EQ(classes(all[0]), (Classes{"a100", "h100"}));
  EXPECT_EQ(all[1].name(), "beta_conv");
  EXPECT_EQ(all[1].owner(), "team-b");
  EXPECT_EQ(all[1].tuned(), 1);
  EXPECT_EQ(classes(all[1]), Classes{"a100"});
  EXPECT_EQ(all[2].name(), "gamma_conv");
  EXPECT_EQ(all[2].owner(), "");
  EXPECT_EQ(all[2].tuned(), 1);
  // Each when its newest import ended, in the order they came.
  EXPECT_GE(all[2].last_tuned_unix_ms(), start_ms);
  EXPECT_LE(all[2].last_tuned_unix_ms(), all[1].last_tuned_unix_ms());
  EXPECT_GE(all[0].last_tuned_unix_ms(), a100_done_ms);
  EXPECT_LE(all[0].last_tuned_unix_ms(), end_ms);

  const std::vector<v1::TunedKernel> a100 = Kernels("a100");
  ASSERT_EQ(a100.size(), 3u);
  EXPECT_EQ(a100[0].tuned(), 2);
  EXPECT_EQ(classes(a100[0]), Classes{"a100"});
  EXPECT_GE(a100[0].last_tuned_unix_ms(), all[1].last_tuned_unix_ms());
  EXPECT_LE(a100[0].last_tuned_unix_ms(), a100_done_ms);
  const std::vector<v1::TunedKernel> h100 = Kernels("h100");
  ASSERT_EQ(h100.size(), 1u);
  EXPECT_EQ(h100[0].name(), "alpha_conv");
  EXPECT_EQ(h100[0].owner(), "team-a");
  EXPECT_EQ(h100[0].tuned(), 1);
  EXPECT_EQ(h100[0].last_tuned_unix_ms(), all[0].last_tuned_unix_ms());
  EXPECT_TRUE(Kernels("v100").empty());

  coordinator_->Kill();
  coordinator_->Start();
  const std::vector<v1::TunedKernel> restarted = Kernels();
  ASSERT_EQ(restarted.size(), all.size());
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(restarted[i].DebugString(), all[i].DebugString()) << "after a restart";
  }
}

// An admin hands a kernel name on: to team-b, whose token may then submit
// under it and team-a's (its first submitter's) not; to no one, after which
// the next team to submit takes it, the earlier jobs no longer counting;
// each kept across a restart. A name without a job, or a team that no
// submitter token in force is named, is refused and changes nothing.
TEST_P(ResultsIoTest, AnAdminHandsAKernelNameToAnotherTeamOrToNoOne) {
  const std::string team_a = Team("team-a");
  const std::string team_b = Team("team-b");
  const std::string team_c = Team("team-c");
  ASSERT_TRUE(SubmitUnder(team_a, "gemm").ok());
  ImportTwo("gemm", "a100", 1024);  // listed, with its owner
  auto owner = [&] {
    const std::vector<v1::TunedKernel> kernels = Kernels();
    return kernels.size() == 1 ? kernels[0].owner() : "(" + std::to_string(kernels.size()) + ")";
  };
  auto expect_refused = [&](const std::string& token, const std::string& team) {
    SCOPED_TRACE(team);
    Status refused = SubmitUnder(token, "gemm");
    EXPECT_EQ(refused.code(), Code::kPermissionDenied) << refused.ToString();
    EXPECT_NE(refused.message().find("kernel 'gemm' belongs to another token name"),
              std::string::npos)
        << refused.message();
  };
  ASSERT_EQ(owner(), "team-a");

  auto unknown = SetOwner("no_such_kernel", "team-b");
  EXPECT_EQ(unknown.status().code(), Code::kNotFound);
  EXPECT_NE(unknown.status().message().find("no job or import is under kernel name "
                                            "'no_such_kernel'"),
            std::string::npos)
      << unknown.status().message();
  auto nobody = SetOwner("gemm", "team-z");
  EXPECT_EQ(nobody.status().code(), Code::kNotFound);
  EXPECT_NE(nobody.status().message().find("no submitter token in force is named 'team-z'"),
            std::string::npos)
      << nobody.status().message();
  auto admin = client::Client::Connect(coordinator_->address(), {});
  ASSERT_TRUE(admin.ok());
  ASSERT_TRUE((*admin)->CreateToken("readers", v1::ROLE_READER).ok());
  EXPECT_EQ(SetOwner("gemm", "readers").status().code(), Code::kNotFound);  // not a submitter
  EXPECT_EQ(owner(), "team-a");
  expect_refused(team_b, "team-b");

  auto handed = SetOwner("gemm", "team-b");
  ASSERT_TRUE(handed.ok()) << handed.status().ToString();
  EXPECT_EQ(handed->kernel(), "gemm");
  EXPECT_EQ(handed->previous_owner(), "team-a");
  EXPECT_EQ(handed->owner(), "team-b");
  EXPECT_EQ(owner(), "team-b");
  expect_refused(team_a, "team-a");
  EXPECT_TRUE(SubmitUnder(team_b, "gemm").ok());
  Restart();
  EXPECT_EQ(owner(), "team-b") << "after a restart";
  expect_refused(team_a, "team-a after a restart");
  EXPECT_TRUE(SubmitUnder(team_b, "gemm").ok());

  auto released = SetOwner("gemm", "");
  ASSERT_TRUE(released.ok()) << released.status().ToString();
  EXPECT_EQ(released->previous_owner(), "team-b");
  EXPECT_EQ(released->owner(), "");
  Restart();
  EXPECT_EQ(owner(), "") << "after a restart";
  ASSERT_TRUE(SubmitUnder(team_c, "gemm").ok());  // the first since takes it
  EXPECT_EQ(owner(), "team-c");
  expect_refused(team_a, "team-a");
  expect_refused(team_b, "team-b");
  Restart();
  EXPECT_EQ(owner(), "team-c") << "after a restart";
  expect_refused(team_a, "team-a after a restart");
  EXPECT_TRUE(SubmitUnder(team_c, "gemm").ok());
}

TF_ON_BOTH_DATABASES(ResultsIoTest);

class ResultsExportTest : public ResultsIoTest {};
INSTANTIATE_TEST_SUITE_P(, ResultsExportTest, ::testing::Values(DbKind::kSqlite), DbKindName);

// Three tuned (problem, device class) pairs: 4096^2 and 1024^2 on one class,
// 4096^2 on another.
TEST_P(ResultsExportTest, ExportedJsonAndHeaderAnswerAsBestDoes) {
  const std::string small = "problem_size_x=1024,problem_size_y=1024";
  Import("A100_T4.json.gz", "ampere");
  Import("A4000_T4.json.gz", "ampere", small);
  Import("W6600_T4.json.gz", "rdna");

  // An output path that cannot be written is the caller's error: exit 2, naming it.
  ProcessResult unwritable =
      Cli({"export", kernel_, "--format", "json", "-o", dir_ / "no-such-folder/best.json"});
  EXPECT_EQ(unwritable.exit_code, 2) << unwritable.output;
  EXPECT_NE(unwritable.output.find("cannot write " + dir_ / "no-such-folder/best.json" +
                                   ": No such file or directory"),
            std::string::npos)
      << unwritable.output;
  ProcessResult json_export =
      Cli({"export", kernel_, "--format", "json", "-o", dir_ / "best.json"});
  ASSERT_TRUE(json_export.success()) << json_export.output;
  ProcessResult header_to_stdout = Cli({"--json", "export", kernel_, "--format", "cpp"});
  EXPECT_EQ(header_to_stdout.exit_code, 2) << header_to_stdout.output;
  EXPECT_NE(header_to_stdout.output.find("a C++ header is not JSON"), std::string::npos)
      << header_to_stdout.output;
  ProcessResult header_export =
      Cli({"--json", "export", kernel_, "--format", "cpp", "-o", dir_ / "best.h"});
  ASSERT_TRUE(header_export.success()) << header_export.output;
  EXPECT_EQ(Output(header_export)["file"], dir_ / "best.h");
  EXPECT_EQ(Output(header_export)["configurations"], 3);
  Json exported = Json::parse(*ReadFile(dir_ / "best.json"));
  ASSERT_EQ(exported["entries"].size(), 3u);
  ProcessResult one_class =
      Cli({"--json", "export", kernel_, "--device-class", "rdna", "--format", "json"});
  ASSERT_TRUE(one_class.success()) << one_class.output;
  EXPECT_EQ(Output(one_class)["entries"].size(), 1u);

  // Queries: each tuned pair, untuned problems nearer to one or the other
  // tuned size, and any device class.
  struct Query {
    std::string device_class;
    int64_t x, y;
  };
  const std::vector<Query> queries = {
      {"ampere", 4096, 4096}, {"ampere", 1024, 1024}, {"rdna", 4096, 4096}, {"ampere", 2000, 1500},
      {"ampere", 3000, 3000}, {"rdna", 512, 512},     {"", 4096, 4096},     {"", 900, 1100}};
  // A program printing each query's configuration, the problem given as
  // `problem` writes it: by position in C++17, by name in C++20.
  Json first_config = exported["entries"][0]["config"];
  auto lookups = [&](const std::string& standard,
                     const std::function<std::string(int64_t, int64_t)>& problem) {
    std::string main_cc = "#include <cstdio>\n#include \"" + dir_ / "best.h" +
                          "\"\nusing namespace tunefleet_best::" + kernel_ +
                          ";\nint main() {\n  const Config* c;\n";
    for (const Query& q : queries) {
      main_cc +=
          "  c = Lookup(\"" + q.device_class + "\", " + problem(q.x, q.y) + ");\n  std::printf(\"";
      std::string args;
      for (const auto& [name, value] : first_config.items()) {
        main_cc += name + "=%lld,";
        args += ", static_cast<long long>(c->" + name + ")";
      }
      main_cc += "\\n\"" + args + ");\n";
    }
    main_cc += "}\n";
    std::vector<std::string> lines;
    EXPECT_TRUE(WriteFileAtomic(dir_ / "main.cc", main_cc).ok());
    auto compiled = RunProcess(
        {"g++", "-std=" + standard, "-Wall", "-Werror", "-o", dir_ / "lookup", dir_ / "main.cc"},
        WithTimeout(120));
    EXPECT_TRUE(compiled.ok() && compiled->success())
        << (compiled.ok() ? compiled->output : compiled.status().ToString()) << main_cc;
    auto ran = RunProcess({dir_ / "lookup"}, WithTimeout(30));
    EXPECT_TRUE(ran.ok() && ran->success());
    if (!ran.ok()) return lines;
    for (size_t start = 0, end; (end = ran->output.find('\n', start)) != std::string::npos;
         start = end + 1) {
      lines.push_back(ran->output.substr(start, end - start));
    }
    return lines;
  };
  const std::vector<std::string> lines = lookups("c++17", [](int64_t x, int64_t y) {
    return "{" + std::to_string(x) + ", " + std::to_string(y) + "}";
  });
  ASSERT_EQ(lines.size(), queries.size());
  // By name, the header's Problem: the same answers.
  EXPECT_EQ(lookups("c++20",
                    [](int64_t x, int64_t y) {
                      return "{.problem_size_x = " + std::to_string(x) +
                             ", .problem_size_y = " + std::to_string(y) + "}";
                    }),
            lines);
  // Named out of the header's order, they do not compile: no other problem answers.
  ASSERT_TRUE(WriteFileAtomic(dir_ / "misordered.cc",
                              "#include \"" + dir_ / "best.h" +
                                  "\"\nconst auto* c = tunefleet_best::" + kernel_ +
                                  "::Lookup(\"\", {.problem_size_y = 1, .problem_size_x = 2});\n")
                  .ok());
  auto misordered =
      RunProcess({"g++", "-std=c++20", "-fsyntax-only", dir_ / "misordered.cc"}, WithTimeout(120));
  ASSERT_TRUE(misordered.ok());
  EXPECT_FALSE(misordered->success()) << "a misordered problem compiled";
  EXPECT_NE(misordered->output.find("problem_size_x"), std::string::npos) << misordered->output;

  auto offline = client::BestConfigCache::Offline(dir_ / "best.json");
  ASSERT_TRUE(offline.ok()) << offline.status().ToString();
  std::set<std::string> distinct;
  for (size_t i = 0; i < queries.size(); ++i) {
    const Query& q = queries[i];
    const std::string problem =
        "problem_size_x=" + std::to_string(q.x) + ",problem_size_y=" + std::to_string(q.y);
    SCOPED_TRACE(q.device_class + " " + problem);
    Json best = Best(problem, q.device_class);
    std::string expected;
    for (const auto& [name, value] : best["config"].items()) {
      expected += name + "=" + std::to_string(value.get<int64_t>()) + ",";
    }
    EXPECT_EQ(lines[i], expected);
    distinct.insert(expected);

    // The client, offline, answers from the JSON file alike.
    auto answer = (*offline)->Lookup(kernel_, *kernelspec::ParseProblem(problem), q.device_class);
    ASSERT_TRUE(answer.ok()) << answer.status().ToString();
    EXPECT_EQ(kernelspec::ConfigKey(answer->config()),
              kernelspec::ConfigKey(
                  *kernelspec::ParseConfigKey(expected.substr(0, expected.size() - 1))));
    EXPECT_EQ(answer->exact(), best["exact"].get<bool>());
    std::map<std::string, int64_t> answered_problem;
    for (const auto& var : answer->problem().vars()) answered_problem[var.name()] = var.value();
    EXPECT_EQ(answered_problem, ConfigOf(best["problem"]));
  }
  // The nearest tuned problem answers an untuned one: 2000x1500 is nearer to
  // 1024^2 than to 4096^2, 3000^2 to 4096^2 (sum of |log2| ratios).
  EXPECT_EQ(lines[3], lines[1]);
  EXPECT_EQ(lines[4], lines[0]);
  EXPECT_EQ(lines[5], lines[2]);
  EXPECT_GE(distinct.size(), 2u) << "the recordings' optima should differ";
  auto unknown = (*offline)->Lookup("no_such_kernel", *kernelspec::ParseProblem(kProblem), "");
  EXPECT_EQ(unknown.status().code(), Code::kNotFound);
  auto elsewhere = (*offline)->Lookup(kernel_, *kernelspec::ParseProblem(kProblem), "nope/1");
  EXPECT_EQ(elsewhere.status().code(), Code::kNotFound);
  EXPECT_NE(elsewhere.status().message().find("on device class 'nope/1' in the exported file"),
            std::string::npos)
      << elsewhere.status().message();

  // A misspelt variable or device class finds nothing; the client and its
  // cache online, and the cache offline, say alike what the kernel is tuned
  // for, and so does `best`. A variable given twice, or no kernel, is refused
  // alike.
  auto client = client::Client::Connect(coordinator_->address(), {});
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  client::BestConfigCache online(client->get());
  v1::Problem twice = *kernelspec::ParseProblem(kProblem);
  *twice.add_vars() = twice.vars(0);
  const struct {
    std::string kernel;
    v1::Problem problem;
    std::string device_class;
    Code code;
    std::string message;  // online; offline adds " in the exported file" before the hint
  } wrong[] = {
      {kernel_, *kernelspec::ParseProblem("problem_size_x=4096,problem_size_z=4096"), "",
       Code::kNotFound,
       "no tuned configuration of kernel '" + kernel_ +
           "' for problem_size_x=4096,problem_size_z=4096 on any device class; its tuned problems "
           "have the variables problem_size_x,problem_size_y"},
      {kernel_, *kernelspec::ParseProblem(kProblem), "ampre", Code::kNotFound,
       "no tuned configuration of kernel '" + kernel_ + "' for " + kProblem +
           " on device class 'ampre'; it is tuned on ampere, rdna"},
      {kernel_, twice, "", Code::kInvalidArgument,
       "problem variable problem_size_x is given twice in '" + std::string(kProblem) +
           ",problem_size_x=4096'"},
      {"", *kernelspec::ParseProblem(kProblem), "", Code::kInvalidArgument, "kernel must be set"},
  };
  for (const auto& w : wrong) {
    SCOPED_TRACE(w.message);
    auto asked = (*client)->QueryBest(w.kernel, w.problem, w.device_class);
    EXPECT_EQ(asked.status().code(), w.code);
    EXPECT_EQ(asked.status().message(), w.message);
    auto cached = online.Lookup(w.kernel, w.problem, w.device_class);
    EXPECT_EQ(cached.status().code(), w.code);
    EXPECT_EQ(cached.status().message(), w.message);
    std::string from_file = w.message;
    if (w.code == Code::kNotFound) from_file.insert(from_file.find(';'), " in the exported file");
    auto read = (*offline)->Lookup(w.kernel, w.problem, w.device_class);
    EXPECT_EQ(read.status().code(), w.code);
    EXPECT_EQ(read.status().message(), from_file);
  }
  // The command line prints the coordinator's sentence.
  ProcessResult misspelt =
      Cli({"best", kernel_, "--problem", "problem_size_x=4096,problem_size_z=4096"});
  EXPECT_EQ(misspelt.exit_code, 4);
  EXPECT_NE(misspelt.output.find(wrong[0].message), std::string::npos) << misspelt.output;
}

// `tunefleet kernels`: exits 4 while nothing is tuned; then a table, the
// owner "-" where there is none and the time in UTC, or with --json an array
// of objects in snake_case.
TEST_P(ResultsExportTest, KernelsPrintsATableOrJson) {
  ProcessResult empty = Cli({"kernels"});
  EXPECT_EQ(empty.exit_code, 4) << empty.output;
  EXPECT_NE(empty.output.find("no kernel is tuned on any device class"), std::string::npos)
      << empty.output;
  Claim("team-a", "alpha_conv");
  ImportTwo("alpha_conv", "a100", 1024);
  ImportTwo("alpha_conv", "h100", 1024);
  ImportTwo("gamma_conv", "a100", 1024);

  ProcessResult json = Cli({"--json", "kernels"});
  ASSERT_TRUE(json.success()) << json.output;
  const Json listed = Output(json);
  ASSERT_EQ(listed.size(), 2u) << json.output;
  std::vector<std::string> keys;
  for (const auto& [key, value] : listed[0].items()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"name", "owner", "tuned", "device_classes",
                                            "last_tuned_unix_ms"}));
  EXPECT_EQ(listed[0]["name"], "alpha_conv");
  EXPECT_EQ(listed[0]["owner"], "team-a");
  EXPECT_EQ(listed[0]["tuned"], 2);
  EXPECT_EQ(listed[0]["device_classes"], Json::array({"a100", "h100"}));
  EXPECT_EQ(listed[1]["name"], "gamma_conv");
  EXPECT_EQ(listed[1]["owner"], "");

  // "2026-12-03 06:15 UTC", as `token list` prints times.
  auto utc = [](int64_t unix_ms) {
    std::time_t seconds = unix_ms / 1000;
    std::tm tm;
    gmtime_r(&seconds, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%d %H:%M UTC", &tm);
    return std::string(text);
  };
  ProcessResult table = Cli({"kernels"});
  ASSERT_TRUE(table.success()) << table.output;
  EXPECT_EQ(table.output,
            "KERNEL      OWNER   TUNED  DEVICE CLASSES  LAST TUNED\n"
            "alpha_conv  team-a  2      a100 h100       " +
                utc(listed[0]["last_tuned_unix_ms"].get<int64_t>()) +
                "\n"
                "gamma_conv  -       1      a100            " +
                utc(listed[1]["last_tuned_unix_ms"].get<int64_t>()) + "\n");

  ProcessResult h100 = Cli({"--json", "kernels", "--device-class", "h100"});
  ASSERT_TRUE(h100.success()) << h100.output;
  ASSERT_EQ(Output(h100).size(), 1u) << h100.output;
  EXPECT_EQ(Output(h100)[0]["tuned"], 1);
  ProcessResult elsewhere = Cli({"kernels", "--device-class", "v100"});
  EXPECT_EQ(elsewhere.exit_code, 4) << elsewhere.output;
  EXPECT_NE(elsewhere.output.find("no kernel is tuned on device class 'v100'"), std::string::npos)
      << elsewhere.output;
}

// The candidates a job of the replayed kernel runs with a budget of
// `budget`, on a replay worker of `recording`: its warm start.
std::set<Config> ResultsIoTest::CandidatesOnReplay(const std::string& recording, int budget) {
  kernelspec::LoadedSpec spec =
      LoadTestSpec(std::string(kSpaces) + "convolution_replay.yaml",
                   [&](v1::KernelSpec& s) { s.mutable_search()->set_max_candidates(budget); });
  auto worker = StartWorker(coordinator_->address(), dir_.path(), "replay-worker",
                            "replay:" + SourcePath(std::string(kSpaces) + recording),
                            {"--replay-speed", "0"});
  auto client = client::Client::Connect(coordinator_->address(), {});
  EXPECT_TRUE(client.ok()) << client.status().ToString();
  if (!client.ok()) return {};
  v1::Job job = WaitForJobEnd(**client, SubmitSpec(**client, spec).job_id(), seconds(120));
  EXPECT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED) << job.error() << coordinator_->Log();
  auto results = (*client)->ListResults(job.job_id());
  EXPECT_TRUE(results.ok()) << results.status().ToString();
  std::set<Config> configs;
  if (!results.ok()) return configs;
  for (const auto& r : *results) {
    Config config;
    for (const auto& s : r.config().settings()) config[s.name()] = s.value().int_value();
    configs.insert(config);
  }
  EXPECT_EQ(configs.size(), static_cast<size_t>(budget));
  return configs;
}

// A job of the kernel on a device with no results of its own starts from the
// best configuration imported for another device: with a budget of one, the
// one candidate it runs is the imported optimum.
TEST_P(ResultsExportTest, AJobWarmStartsFromImportedResults) {
  const Optimum optimum = T4Optimum(std::string(kSpaces) + "A100_T4.json.gz");
  ProcessResult imported =
      Cli({"import", "results", SourcePath(std::string(kSpaces) + "A100_T4.json.gz"), "--kernel",
           kReplayKernel, "--device-class", "a100", "--problem", kReplayProblem});
  ASSERT_TRUE(imported.success()) << imported.output;
  EXPECT_EQ(CandidatesOnReplay("W6600_T4.json.gz", 1), std::set<Config>{optimum.config});
}

// Imported from three devices, a job on a fourth starts from the
// configurations with the best mean fraction of each device's optimum (0.82
// to 0.83 of the W6600's), not from the fastest configuration imported (the
// A100's optimum, 0.07 of the W6600's).
TEST_P(ResultsExportTest, AJobWarmStartsFromTheBestOnEveryOtherDevice) {
  std::map<Config, double> worth;
  for (const char* device : {"A100", "A4000", "MI250X"}) {
    const std::string file = std::string(kSpaces) + device + "_T4.json.gz";
    const double optimum = T4Optimum(file).time_ms;
    for (const auto& [config, time] : T4Times(file)) worth[config] += optimum / time;
    std::string device_class = device;
    std::transform(device_class.begin(), device_class.end(), device_class.begin(), ::tolower);
    ProcessResult imported = Cli({"import", "results", SourcePath(file), "--kernel", kReplayKernel,
                                  "--device-class", device_class, "--problem", kReplayProblem});
    ASSERT_TRUE(imported.success()) << imported.output;
  }
  std::vector<std::pair<double, Config>> ranked;
  for (const auto& [config, w] : worth) ranked.emplace_back(-w, config);
  std::sort(ranked.begin(), ranked.end());
  std::set<Config> best;
  for (size_t i = 0; i < search::kWarmStartConfigs; ++i) best.insert(ranked[i].second);
  ASSERT_FALSE(best.count(T4Optimum(std::string(kSpaces) + "A100_T4.json.gz").config));
  EXPECT_EQ(CandidatesOnReplay("W6600_T4.json.gz", search::kWarmStartConfigs), best);
}

}  // namespace
}  // namespace tf::testing
