// The `tunefleet` binary against a coordinator that knows one tuned kernel:
// exit codes and JSON output, as scripts see them.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "common/files.h"
#include "common/subprocess.h"
#include "kernelspec/best_query.h"
#include "kernelspec/config.h"
#include "tests/test_util.h"
#include "tunefleet/v1/tunefleet.grpc.pb.h"

namespace tf {
namespace {

namespace v1 = ::tunefleet::v1;

class OneKernelCoordinator final : public v1::TuneFleet::Service {
 public:
  static constexpr int64_t kCancelledJob = 13;
  // Cancelled with one of its two problems tuned, as the coordinator shows it.
  static v1::Job Cancelled() {
    v1::Job job;
    job.set_job_id(kCancelledJob);
    job.set_kernel("gemm");
    job.set_state(v1::JOB_STATE_CANCELLED);
    v1::BestEntry* best = job.add_best();
    *best->mutable_problem() = *kernelspec::ParseProblem("M=64,N=64,K=64");
    *best->mutable_config() = *kernelspec::ParseConfigKey("BM=64,BN=128");
    best->mutable_timing()->set_median_ns(5000);
    *job.add_problems_without_success() = *kernelspec::ParseProblem("M=512,N=128,K=256");
    return job;
  }

  grpc::Status QueryBest(grpc::ServerContext*, const v1::QueryBestRequest* request,
                         v1::QueryBestResponse* response) override {
    if (request->kernel() != "gemm") {
      // Not found, in the coordinator's words; kernel "conv" is tuned for
      // problems of N, on a100 only.
      v1::QueryBestResponse conv;
      conv.set_kernel("conv");
      *conv.mutable_problem() = *kernelspec::ParseProblem("N=4096");
      conv.set_device_class("a100");
      std::vector<const v1::QueryBestResponse*> tuned;
      if (request->kernel() == "conv") tuned.push_back(&conv);
      kernelspec::SetNotTuned(*request, tuned, response);
      return grpc::Status::OK;
    }
    response->set_found(true);
    response->set_exact(true);
    response->set_kernel("gemm");
    response->set_device_class(request->device_class().empty() ? "cpu/test/4c"
                                                               : request->device_class());
    // Sorted by name, as the coordinator keeps problems.
    *response->mutable_problem() =
        *kernelspec::ParseProblem(kernelspec::ProblemKey(request->problem()));
    *response->mutable_config() = *kernelspec::ParseConfigKey("BM=64,BN=128");
    response->mutable_timing()->set_median_ns(5000);
    return grpc::Status::OK;
  }
  grpc::Status GetJob(grpc::ServerContext*, const v1::GetJobRequest* request,
                      v1::Job* job) override {
    if (request->job_id() != kCancelledJob) {
      return grpc::Status(grpc::StatusCode::NOT_FOUND,
                          "no job " + std::to_string(request->job_id()));
    }
    *job = Cancelled();
    return grpc::Status::OK;
  }
  grpc::Status WatchJob(grpc::ServerContext* context, const v1::GetJobRequest* request,
                        grpc::ServerWriter<v1::JobEvent>* writer) override {
    v1::JobEvent event;
    grpc::Status got = GetJob(context, request, event.mutable_job());
    if (got.ok()) writer->Write(event);
    return got;
  }
  // As the coordinator answers for a job that has ended: the job as it was.
  grpc::Status CancelJob(grpc::ServerContext*, const v1::GetJobRequest* request,
                         v1::Job* job) override {
    job->set_job_id(request->job_id());
    job->set_state(v1::JOB_STATE_SUCCEEDED);
    return grpc::Status::OK;
  }
  // As the coordinator refuses a spec its checks find wrong.
  grpc::Status SubmitJob(grpc::ServerContext*, const v1::SubmitJobRequest*, v1::Job*) override {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "search.strategy: 'genetic' is not one of auto, exhaustive");
  }
};

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(port_, 0);
  }
  void TearDown() override { server_->Shutdown(); }

  ProcessResult Run(std::vector<std::string> args, int port = 0) {
    return RunWithAddress("127.0.0.1:" + std::to_string(port ? port : port_), std::move(args));
  }
  ProcessResult RunWithAddress(const std::string& address, std::vector<std::string> args) {
    args.insert(args.begin(),
                {std::string(TF_BINARY_DIR) + "/bin/tunefleet", "--coordinator", address});
    RunOptions options;
    options.timeout_s = 30;
    Result<ProcessResult> result = RunProcess(args, options);
    EXPECT_TRUE(result.ok()) << result.status().ToString() << " (build the tunefleet target)";
    return result.ok() ? *result : ProcessResult();
  }

  OneKernelCoordinator service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

TEST_F(CliTest, BestPrintsJsonWithIntegerConfig) {
  ProcessResult result = Run({"best", "gemm", "--problem", "M=64,N=64,K=64", "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.output;
  nlohmann::json json = nlohmann::json::parse(result.output);
  EXPECT_EQ(json["kernel"], "gemm");
  EXPECT_EQ(json["config"]["BM"], 64);
  EXPECT_EQ(json["problem"]["K"], 64);
  EXPECT_EQ(json["device_class"], "cpu/test/4c");
  EXPECT_EQ(json["median_ns"], 5000.0);
  EXPECT_EQ(json["exact"], true);
}

TEST_F(CliTest, BestTakesTheDeviceClassByTheNameExportAndImportGiveIt) {
  for (const char* flag : {"--device-class", "--device"}) {
    ProcessResult result = Run({"best", "gemm", "--problem", "M=64", flag, "a100", "--json"});
    ASSERT_EQ(result.exit_code, 0) << flag << ": " << result.output;
    EXPECT_EQ(nlohmann::json::parse(result.output)["device_class"], "a100") << flag;
  }
}

// The coordinator answers with the problem's variables sorted by name; the
// answer shows them as they were asked, as `status` shows the spec's order.
TEST_F(CliTest, BestShowsTheProblemInTheOrderItWasAsked) {
  ProcessResult result = Run({"best", "gemm", "--problem", "M=64,N=32,K=16"});
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("problem:  M=64,N=32,K=16\n"), std::string::npos) << result.output;
  // As people write it, spaces after the commas.
  result = Run({"best", "gemm", "--problem", "M=64, N=32, K = 16"});
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("problem:  M=64,N=32,K=16\n"), std::string::npos) << result.output;
}

// A forgotten variable or a misspelt device class finds nothing; the answer
// says what the kernel is tuned for.
TEST_F(CliTest, BestThatFindsNothingSaysWhatTheKernelIsTunedFor) {
  ProcessResult result = Run({"best", "conv", "--problem", "M=1,N=1"});
  EXPECT_EQ(result.exit_code, 4) << result.output;
  EXPECT_NE(result.output.find("for M=1,N=1 on any device class; its tuned problems have the "
                               "variables N\n"),
            std::string::npos)
      << result.output;
  result = Run({"best", "conv", "--problem", "N=1", "--device", "a10"});
  EXPECT_EQ(result.exit_code, 4) << result.output;
  EXPECT_NE(result.output.find("on device class 'a10'; it is tuned on a100\n"), std::string::npos)
      << result.output;
}

TEST_F(CliTest, BestOfUntunedKernelExits4) {
  ProcessResult result = Run({"best", "conv", "--problem", "N=1"});
  EXPECT_EQ(result.exit_code, 4) << result.output;
  EXPECT_NE(result.output.find("no tuned configuration of kernel 'conv'"), std::string::npos)
      << result.output;
}

TEST_F(CliTest, UnknownJobExits4WithTheCoordinatorsMessage) {
  ProcessResult result = Run({"status", "99"});
  EXPECT_EQ(result.exit_code, 4) << result.output;
  EXPECT_NE(result.output.find("no job 99"), std::string::npos) << result.output;
}

TEST_F(CliTest, MalformedProblemExits2) {
  ProcessResult result = Run({"best", "gemm", "--problem", "M"});
  EXPECT_EQ(result.exit_code, 2) << result.output;
  result = Run({"best", "gemm", "--problem", "M=256,M=512,N=256"});
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("M is given twice in 'M=256,M=512,N=256'"), std::string::npos)
      << result.output;
  result = Run({"best", "gemm", "--problem", "M=99999999999999999999"});
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("M: 99999999999999999999 is out of the range of a 64-bit integer"),
            std::string::npos)
      << result.output;
}

TEST_F(CliTest, UnreachableCoordinatorExits3) {
  const int port = port_;
  server_->Shutdown();
  ProcessResult result = Run({"best", "gemm", "--problem", "M=1"}, port);
  EXPECT_EQ(result.exit_code, 3) << result.output;
  EXPECT_NE(result.output.find("cannot reach coordinator at 127.0.0.1:" + std::to_string(port)),
            std::string::npos)
      << result.output;
}

TEST_F(CliTest, PortOverTheRangeIsAUsageErrorNotAnotherPort) {
  // gRPC alone would dial 99999 modulo 65536, port 34463.
  ProcessResult result = RunWithAddress("127.0.0.1:99999", {"status", "1"});
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("'127.0.0.1:99999': port 99999 is out of range (0-65535)"),
            std::string::npos)
      << result.output;
}

TEST_F(CliTest, AnAddressThatDoesNotEndInAPortIsAUsageError) {
  // gRPC alone would dial localhost:443 for "localhost", and resolve "127.0.0.1:50051x".
  for (const char* address :
       {"localhost", "127.0.0.1:50051x", "127.0.0.1:", "http://127.0.0.1:50051"}) {
    ProcessResult result = RunWithAddress(address, {"status", "1"});
    EXPECT_EQ(result.exit_code, 2) << address << ": " << result.output;
    EXPECT_NE(result.output.find("coordinator address '" + std::string(address) +
                                 "': expected HOST:PORT"),
              std::string::npos)
        << result.output;
  }
}

TEST_F(CliTest, AnEmptyAddressOrItemIsAUsageErrorNamingIt) {
  // The Python client's words too (test_reconnect.py); "" was 127.0.0.1:50051
  // there, and "A," said "'' has no port".
  const std::map<std::string, std::string> refusals = {
      {"", "coordinator address is empty; use HOST:PORT[,HOST:PORT...]"},
      {"127.0.0.1:1, ,127.0.0.1:2",
       "coordinator addresses '127.0.0.1:1, ,127.0.0.1:2' have an empty item; "
       "use HOST:PORT[,HOST:PORT...]"}};
  for (const auto& [address, message] : refusals) {
    ProcessResult result = RunWithAddress(address, {"status", "1"});
    EXPECT_EQ(result.exit_code, 2) << address << ": " << result.output;
    EXPECT_NE(result.output.find(message), std::string::npos) << result.output;
  }
}

TEST_F(CliTest, ANumberFlagOutOfRangeIsNamedWithItsValue) {
  ProcessResult result = Run({"jobs", "--limit", "-3"});
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("--limit: -3 is negative"), std::string::npos) << result.output;
  result = Run({"space", "gemm.yaml", "--show", "x"});
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("--show: 'x' is not a number"), std::string::npos) << result.output;
  result = Run({"compile", "gemm.yaml", "--jobs", "-3"});
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("--jobs: -3 is negative"), std::string::npos) << result.output;
  result = Run({"compile", "gemm.yaml", "--jobs", "nan"});
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("--jobs: nan is not a finite number"), std::string::npos)
      << result.output;
  for (const char* command : {"status", "watch", "cancel", "results"}) {
    result = Run({command, "abc"});
    EXPECT_EQ(result.exit_code, 2) << result.output;
    EXPECT_NE(result.output.find("JOB: 'abc' is not a whole number"), std::string::npos)
        << result.output;
    result = Run({command, "-1"});
    EXPECT_EQ(result.exit_code, 2) << result.output;
    EXPECT_NE(result.output.find("JOB: -1 is not above 0"), std::string::npos) << result.output;
    result = Run({command, "99999999999999999999999"});
    EXPECT_EQ(result.exit_code, 2) << result.output;
    EXPECT_NE(result.output.find("JOB: 99999999999999999999999 is too large for an id"),
              std::string::npos)
        << result.output;
  }
  result = Run({"token", "revoke", "abc"});
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("ID: 'abc' is not a whole number"), std::string::npos)
      << result.output;
}

// gRPC aborts the process on a header value with a line break; a token
// file holding `token create`'s whole output must be refused first, and
// without printing the secret.
TEST_F(CliTest, ATokenThatIsNotOneLineIsAUsageErrorThatKeepsItsSecret) {
  testing::TempDir dir;
  const std::string path = dir / "reader.token";
  ASSERT_TRUE(WriteFileAtomic(path, "token 3 (reader) created:\ntf_3_0123456789abcdef\n").ok());
  ProcessResult result = Run({"--token-file", path, "jobs"});
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("--token-file: " + path + ": the token has a space at character 6"),
            std::string::npos)
      << result.output;
  EXPECT_EQ(result.output.find("0123456789abcdef"), std::string::npos) << result.output;

  RunOptions options;
  options.timeout_s = 30;
  auto from_environment =
      RunProcess({"/usr/bin/env", "TUNEFLEET_TOKEN=tf_3_0123\n456789abcdef",
                  std::string(TF_BINARY_DIR) + "/bin/tunefleet", "--coordinator",
                  "127.0.0.1:" + std::to_string(port_), "jobs"},
                 options);
  ASSERT_TRUE(from_environment.ok()) << from_environment.status().ToString();
  EXPECT_EQ(from_environment->exit_code, 2) << from_environment->output;
  EXPECT_NE(from_environment->output.find("TUNEFLEET_TOKEN: the token has a line break at "
                                          "character 10"),
            std::string::npos)
      << from_environment->output;
}

TEST_F(CliTest, AnArchGivenWithTargetIsBlamedOnTheFlagNotOnTheSpecFile) {
  ProcessResult result =
      Run({"compile", testing::SourcePath("examples/cpu/gemm/gemm.yaml"), "--target", "sm_90"});
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("--target: 'sm_90'"), std::string::npos) << result.output;
  EXPECT_EQ(result.output.find("gemm.yaml:"), std::string::npos) << result.output;
}

// The compiler's output, as --json has it, shown once and whole: its first
// error was printed twice, in the headline and again in the output.
TEST_F(CliTest, CompileShowsTheCompilersMessageOnce) {
  testing::TempDir dir;
  const std::string example = testing::SourcePath("examples/cpu/gemm/");
  std::filesystem::copy_file(example + "gemm.yaml", dir / "gemm.yaml");
  Result<std::string> source = ReadFile(example + "gemm.cpp");
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  ASSERT_TRUE(
      WriteFileAtomic(dir / "gemm.cpp", *source + "\n#error this kernel does not compile\n").ok());
  const std::vector<std::string> compile = {"compile", dir / "gemm.yaml", "--limit",
                                            "1",       "--out",           dir / "artifacts"};
  ProcessResult human = Run(compile);
  ASSERT_EQ(human.exit_code, 1) << human.output;
  std::vector<std::string> as_json = compile;
  as_json.push_back("--json");
  ProcessResult machine = Run(as_json);
  ASSERT_EQ(machine.exit_code, 1) << machine.output;
  const std::string diagnostics = nlohmann::json::parse(
      machine.output.substr(machine.output.rfind("\n{")))["failures"][0]["diagnostics"];
  // "compilation failed: <first error>\n<the compiler's output>"
  const size_t newline = diagnostics.find('\n');
  const std::string error = diagnostics.substr(0, newline).substr(diagnostics.find(": ") + 2);
  const std::string output = diagnostics.substr(newline + 1);
  EXPECT_NE(error.find("error: #error this kernel does not compile"), std::string::npos)
      << diagnostics;
  EXPECT_NE(human.output.find(output), std::string::npos) << human.output;
  const size_t first = human.output.find(error);
  EXPECT_EQ(human.output.find(error, first + 1), std::string::npos) << human.output;
  // Counts of one read as one thing.
  EXPECT_NE(human.output.find("1 configuration over 2 problems,"), std::string::npos)
      << human.output;
  EXPECT_NE(human.output.find("1 configuration in 1 batch, 1 compiler run, 1 failed"),
            std::string::npos)
      << human.output;
}

TEST_F(CliTest, CancelOfAJobThatEndedSaysNothingWasCancelled) {
  ProcessResult result = Run({"cancel", "7"});
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(result.output, "job 7 had already succeeded; nothing to cancel\n");
}

// Its other problems never ran: no candidate of theirs failed.
TEST_F(CliTest, ACancelledJobsProblemsWithoutABestWereNotFinished) {
  for (const char* command : {"status", "watch"}) {
    ProcessResult result = Run({command, "13"});
    EXPECT_EQ(result.exit_code, std::string(command) == "watch" ? 1 : 0) << result.output;
    EXPECT_NE(result.output.find("job 13 cancelled: kernel gemm"), std::string::npos)
        << result.output;
    EXPECT_NE(result.output.find("M=512,N=128,K=256: not finished: the job was cancelled\n"),
              std::string::npos)
        << result.output;
    EXPECT_EQ(result.output.find("no candidate succeeded"), std::string::npos) << result.output;
  }
}

TEST_F(CliTest, MisspelledCommandIsNamed) {
  ProcessResult result = Run({"stauts", "3"});
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("unknown command 'stauts'; `tunefleet --help` lists them"),
            std::string::npos)
      << result.output;
  result = Run({"--verbose"});
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("unknown option '--verbose'; `tunefleet --help` lists them"),
            std::string::npos)
      << result.output;
  result = Run({"token", "lst"});
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("unknown command 'lst'; `tunefleet token --help` lists them"),
            std::string::npos)
      << result.output;
}

TEST_F(CliTest, SpecRefusedByTheCoordinatorNamesTheFileTheLineAndTheField) {
  testing::TempDir dir;
  const std::string example = *ReadFile(testing::SourcePath("examples/cpu/gemm/gemm.yaml"));
  ASSERT_TRUE(WriteFileAtomic(dir / "gemm.yaml", example).ok());
  ASSERT_TRUE(WriteFileAtomic(dir / "gemm.cpp", "").ok());
  const auto search_line =
      std::count(example.begin(), example.begin() + example.find("\nsearch:"), '\n') + 2;
  ProcessResult result = Run({"submit", dir / "gemm.yaml"});
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find(dir / "gemm.yaml:" + std::to_string(search_line) +
                               ": search.strategy: 'genetic' is not one of"),
            std::string::npos)
      << result.output;
}

// `space` and `compile` check a spec here, without a coordinator: each
// problem on the line of its field, and nothing built.
TEST_F(CliTest, SpecCheckedLocallyNamesTheFileAndTheLineOfEachProblem) {
  testing::TempDir dir;
  ASSERT_TRUE(WriteFileAtomic(dir / "add.cc", "").ok());
  ASSERT_TRUE(WriteFileAtomic(dir / "add.yaml",
                              "kernel: add\n"
                              "source: add.cc\n"
                              "entry: \"add<{UNROLL}>\"\n"
                              "params:\n"
                              "  UNROLL: [1, 2]\n"
                              "  SPARE: [1, 2]\n"
                              "constraints: [\"UNROLL <= 2\", \"UNROL > 0\"]\n"
                              "problems: [{N: 64}]\n"
                              "buffers: {Z: {dtype: f32, count: N, output: true}}\n")
                  .ok());
  for (std::vector<std::string> command :
       {std::vector<std::string>{"space", dir / "add.yaml"},
        std::vector<std::string>{"compile", dir / "add.yaml", "--out", dir / "artifacts"}}) {
    ProcessResult result = Run(command);
    EXPECT_EQ(result.exit_code, 2) << result.output;
    EXPECT_NE(result.output.find(dir / "add.yaml:6: params.SPARE: is used neither in entry"),
              std::string::npos)
        << result.output;
    EXPECT_NE(result.output.find(dir / "add.yaml:7: constraints[1]: 'UNROL > 0' uses 'UNROL'"),
              std::string::npos)
        << result.output;
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "artifacts"));
}

// A replay spec's space: its device kind has no hardware to ask for
// properties (it crashed `space`).
TEST_F(CliTest, ASpecPathThatIsAFolderIsNamedAsSuch) {
  const std::string folder = std::string(TF_BINARY_DIR) + "/bin";
  ProcessResult result = Run({"space", folder});
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("cannot read " + folder + ": Is a directory"), std::string::npos)
      << result.output;
}

TEST_F(CliTest, SpaceNamesTheLineOfAConstraintOnAnUnknownDeviceProperty) {
  const std::string spec = std::string(TF_SOURCE_DIR) + "/examples/cuda/transpose/transpose.yaml";
  ProcessResult result = Run({"space", spec});
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find(
                "transpose.yaml:13: constraints[1]: 'TILE * ROWS <= device.max_threads_per_block': "
                "device property 'max_threads_per_block' is unknown for this device; known: (none) "
                "(give it with --device-prop NAME=VALUE)"),
            std::string::npos)
      << result.output;
  result = Run({"space", spec, "--device-prop", "max_threads_per_block=1024"});
  EXPECT_EQ(result.exit_code, 0) << result.output;
  // A misspelt name is named, not ignored.
  result = Run({"space", spec, "--device-prop", "max_thread_per_block=1024"});
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("--device-prop max_thread_per_block: no constraint of the spec "
                               "uses device.max_thread_per_block; they use "
                               "device.max_threads_per_block"),
            std::string::npos)
      << result.output;
}

TEST_F(CliTest, SpaceCountsAReplaySpecsConfigurations) {
  ProcessResult result =
      Run({"space", testing::SourcePath("tests/data/spaces/convolution/convolution_replay.yaml")});
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("4362"), std::string::npos) << result.output;
}

// Ten billion combinations, every one walked to be counted: `space` counted for hours
// without a word. It now stops at --max-seconds and says that its count is a lower bound.
TEST_F(CliTest, SpaceOfAHugeSpaceStopsAndSaysItsCountIsALowerBound) {
  testing::TempDir dir;
  ASSERT_TRUE(WriteFileAtomic(dir / "add.cc", "").ok());
  ASSERT_TRUE(WriteFileAtomic(dir / "huge.yaml",
                              "kernel: huge\n"
                              "source: add.cc\n"
                              "entry: \"add<{A},{B},{C},{U}>\"\n"
                              "params:\n"
                              "  A: {from: 1, to: 1000000}\n"
                              "  B: {from: 1, to: 100}\n"
                              "  C: {from: 1, to: 100}\n"
                              "  U: [1, 2]\n"
                              "constraints: [\"C * U > 1\"]\n"  // decided at the last parameter
                              "problems: [{N: 64}]\n"
                              "buffers: {Z: {dtype: f32, count: N, output: true}}\n"
                              "search: {strategy: random, max_candidates: 100}\n")
                  .ok());
  ProcessResult result = Run({"space", dir / "huge.yaml", "--max-seconds", "1", "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_LT(result.wall_seconds, 20);
  const size_t json = result.output.rfind("\n{");
  nlohmann::json out =
      nlohmann::json::parse(result.output.substr(json == std::string::npos ? 0 : json));
  EXPECT_EQ(out["complete"], false);
  EXPECT_FALSE(out.contains("configurations")) << "a lower bound is not given as the count";
  EXPECT_GT(out["configurations_at_least"].get<uint64_t>(), 0u);
  const nlohmann::json& problem = out["problems"][0];
  EXPECT_EQ(problem["cartesian"].get<uint64_t>(), 20'000'000'000u);
  EXPECT_EQ(problem["complete"], false);
  EXPECT_GT(problem["walked"].get<double>(), 0);
  EXPECT_LT(problem["walked"].get<double>(), 1);
  EXPECT_EQ(problem["first"].size(), 5u);

  result = Run({"space", dir / "huge.yaml", "--max-seconds", "1"});
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("huge: at least "), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("of 20000000000 in the cartesian product satisfy the constraints "
                               "(counting stopped after "),
            std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("counting the valid configurations of 20000000000 combinations"),
            std::string::npos)
      << "progress on stderr: " << result.output;

  // A space counted in time is counted exactly, as before.
  result =
      Run({"space", testing::SourcePath("tests/data/spaces/convolution/convolution_replay.yaml"),
           "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.output;
  out = nlohmann::json::parse(result.output);
  EXPECT_EQ(out["complete"], true);
  EXPECT_EQ(out["configurations"].get<uint64_t>(), 4362u);
}

}  // namespace
}  // namespace tf
