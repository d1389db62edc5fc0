// Every program's --help, as someone meeting it for the first time runs it:
// it exits 0 and says what the program is, how to call it and, for the
// commands people run, an example. Unknown options are usage errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "common/subprocess.h"
#include "tests/test_util.h"

namespace tf {
namespace {

ProcessResult RunProgram(const std::string& program, std::vector<std::string> args) {
  args.insert(args.begin(), testing::BinaryPath("bin/" + program));
  RunOptions options;
  options.timeout_s = 30;
  Result<ProcessResult> result = RunProcess(args, options);
  EXPECT_TRUE(result.ok()) << result.status().ToString() << " (build " << program << ")";
  return result.ok() ? *result : ProcessResult();
}

bool Says(const ProcessResult& result, const std::string& text) {
  return result.output.find(text) != std::string::npos;
}

TEST(HelpTest, CommandsForPeopleDescribeThemselvesWithAnExample) {
  for (const std::string program : {"tunefleet-coordinator", "tunefleet-worker"}) {
    ProcessResult help = RunProgram(program, {"--help"});
    EXPECT_EQ(help.exit_code, 0) << program << ": " << help.output;
    EXPECT_TRUE(Says(help, "Example: " + program + " --")) << program << ": " << help.output;
    EXPECT_TRUE(Says(help, "Usage:")) << program << ": " << help.output;
  }
  ProcessResult help = RunProgram("tunefleet", {"--help"});
  EXPECT_EQ(help.exit_code, 0) << help.output;
  EXPECT_TRUE(Says(help, "Exit codes:")) << help.output;
}

TEST(HelpTest, EveryTunefleetCommandHasAnExample) {
  for (std::vector<std::string> command : {std::vector<std::string>{"submit"},
                                           {"status"},
                                           {"watch"},
                                           {"jobs"},
                                           {"cancel"},
                                           {"results"},
                                           {"workers"},
                                           {"kernels"},
                                           {"kernels", "set-owner"},
                                           {"best"},
                                           {"token", "create"},
                                           {"token", "list"},
                                           {"token", "revoke"},
                                           {"spec"},
                                           {"compile"},
                                           {"space"},
                                           {"import", "kerneltuner"},
                                           {"import", "results"},
                                           {"export"}}) {
    command.push_back("--help");
    ProcessResult help = RunProgram("tunefleet", command);
    EXPECT_EQ(help.exit_code, 0) << command[0] << ": " << help.output;
    EXPECT_TRUE(Says(help, "Examples:\n  tunefleet " + command[0])) << help.output;
  }
}

// The helpers the coordinator and the worker start beside themselves say
// so, rather than take --help for a flag's name or wait on the terminal.
TEST(HelpTest, HelperProgramsSayWhatStartsThem) {
  for (const std::string program : {"tunefleet-runner", "tunefleet-sandbox", "tunefleet-nvrtc"}) {
    if (program == "tunefleet-nvrtc" &&
        !std::filesystem::exists(testing::BinaryPath("bin/" + program))) {
      continue;  // built only where the CUDA toolkit is
    }
    ProcessResult help = RunProgram(program, {"--help"});
    EXPECT_EQ(help.exit_code, 0) << program << ": " << help.output;
    EXPECT_TRUE(Says(help, program + ": ")) << help.output;
    EXPECT_TRUE(Says(help, "usage: " + program + " [--") || Says(help, "usage: " + program + " --"))
        << help.output;
  }
}

TEST(HelpTest, UnknownOptionsAreUsageErrors) {
  ProcessResult coordinator = RunProgram(
      "tunefleet-coordinator",
      {"--db", "/nonexistent/t.db", "--artifacts", "/nonexistent", "--lisen", "127.0.0.1:0"});
  EXPECT_EQ(coordinator.exit_code, 2) << coordinator.output;
  EXPECT_TRUE(Says(coordinator, "--lisen")) << coordinator.output;
  // Named before the required flags it leaves out.
  ProcessResult mistyped = RunProgram("tunefleet-coordinator", {"--lisen", "127.0.0.1:0"});
  EXPECT_EQ(mistyped.exit_code, 2) << mistyped.output;
  EXPECT_TRUE(Says(mistyped, "--lisen")) << mistyped.output;
  EXPECT_FALSE(Says(mistyped, "--db is required")) << mistyped.output;
  ProcessResult worker = RunProgram("tunefleet-worker", {"--coordinator", "127.0.0.1:1", "--cache",
                                                         "/nonexistent", "--device", "cpu:1"});
  EXPECT_EQ(worker.exit_code, 2) << worker.output;
  EXPECT_TRUE(Says(worker, "--device")) << worker.output;
  ProcessResult cli = RunProgram("tunefleet", {"jobs", "--limt", "3"});
  EXPECT_EQ(cli.exit_code, 2) << cli.output;
  EXPECT_TRUE(Says(cli, "--limt")) << cli.output;
}

}  // namespace
}  // namespace tf
