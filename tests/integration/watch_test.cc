// Following a job from the command line as its user does: `tunefleet watch`,
// `tunefleet submit --wait` stopped by Ctrl-C, and a running job whose only
// worker was killed. Real coordinator, worker and CLI processes over
// 127.0.0.1.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include "tests/test_util.h"

namespace tf::testing {
namespace {

namespace v1 = ::tunefleet::v1;
using std::chrono::seconds;
using ::testing::HasSubstr;
using ::testing::Not;

// The first line of `text` that holds `part`, or "".
std::string LineWith(const std::string& text, const std::string& part) {
  const size_t at = text.find(part);
  if (at == std::string::npos) return "";
  const size_t begin = text.rfind('\n', at);
  const size_t start = begin == std::string::npos ? 0 : begin + 1;
  return text.substr(start, text.find('\n', at) - start);
}

class WatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Workers silent for three heartbeats are no longer alive.
    coordinator_ = std::make_unique<CoordinatorProcess>(
        dir_.path(), std::vector<std::string>{"--lease-ttl-ms", "1500", "--heartbeat-ms", "300"});
    coordinator_->Start();
    auto client = client::Client::Connect(coordinator_->address());
    ASSERT_TRUE(client.ok());
    client_ = std::move(*client);
  }

  void TearDown() override {
    if (HasFailure()) std::cerr << "coordinator log:\n" << coordinator_->Log() << "\n";
  }

  // The CLI as a process of its own, its output in `log_name` under the test's folder.
  std::unique_ptr<Process> StartCli(std::vector<std::string> args, const std::string& log_name) {
    args.insert(args.begin(), {BinaryPath("bin/tunefleet"), "--coordinator", address()});
    return Process::Start(args, dir_ / log_name);
  }

  nlohmann::json StatusJson(int64_t job_id) {
    const ProcessResult status = RunCli(address(), {"status", std::to_string(job_id), "--json"});
    EXPECT_EQ(status.exit_code, 0) << status.output;
    return nlohmann::json::parse(status.output, nullptr, /*allow_exceptions=*/false);
  }

  // Waits for the process's exit; its exit code, or -1.
  static int ExitCode(Process& process, seconds timeout) {
    int wait_status = 0;
    if (!WaitFor([&] { return process.Exited(&wait_status); }, timeout)) return -1;
    return WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1;
  }

  std::string address() const { return coordinator_->address(); }

  TempDir dir_;
  std::unique_ptr<CoordinatorProcess> coordinator_;
  std::unique_ptr<client::Client> client_;
};

TEST_F(WatchTest, ARunningJobWhoseOnlyWorkerWasKilledSaysNoLiveDeviceIsLeftUntilOneRegisters) {
  auto worker = StartWorker(address(), dir_.path(), "w0", "cpu:1");
  const v1::Job job = SubmitSpec(*client_, LoadTestSpec("tests/integration/data/slow/slow.yaml"));
  ASSERT_GT(job.job_id(), 0);
  const std::string id = std::to_string(job.job_id());
  auto watcher = StartCli({"watch", id}, "watch.log");
  std::string worker_id;
  ASSERT_TRUE(WaitFor(
      [&] {
        auto workers = client_->ListWorkers();
        auto now = client_->GetJob(job.job_id());
        if (!workers.ok() || workers->empty() || !now.ok()) return false;
        worker_id = (*workers)[0].worker_id();
        return now->state() == v1::JOB_STATE_RUNNING && now->candidates_done() >= 2;
      },
      seconds(120)))
      << worker->Log();
  worker->Kill();

  const std::string device_class = client_->GetJob(job.job_id())->device_class();
  const std::string stranded = "no live device of class " + device_class +
                               ": its workers stopped (" + worker_id +
                               " silent); the job resumes when one registers";
  EXPECT_TRUE(
      WaitFor([&] { return StatusJson(job.job_id())["waiting_for"] == stranded; }, seconds(20)))
      << StatusJson(job.job_id()).dump();
  const nlohmann::json status = StatusJson(job.job_id());
  EXPECT_EQ(status["state"], "running");
  EXPECT_LT(status["candidates_done"], status["candidates_total"]);
  EXPECT_THAT(
      RunCli(address(), {"status", id}).output,
      HasSubstr("job " + id + " running: kernel spin on " + device_class + "\n" + stranded + "\n"));
  // The watch was told, with no ETA that could only grow.
  std::string told;
  EXPECT_TRUE(WaitFor(
      [&] {
        told = LineWith(watcher->Log(), stranded);
        return !told.empty();
      },
      seconds(10)))
      << watcher->Log();
  EXPECT_THAT(told, Not(HasSubstr("ETA")));

  auto revived = StartWorker(address(), dir_.path(), "w1", "cpu:1");
  EXPECT_EQ(ExitCode(*watcher, seconds(180)), 0) << watcher->Log() << revived->Log();
  EXPECT_THAT(watcher->Log(), HasSubstr("job " + id + " succeeded ["));
  EXPECT_EQ(StatusJson(job.job_id())["waiting_for"], "");
}

TEST_F(WatchTest, WatchFollowsAJobToItsEndAndExitsAsItEnded) {
  auto worker = StartWorker(address(), dir_.path(), "w0", "cpu:1");
  const v1::Job fast = SubmitSpec(
      *client_, LoadTestSpec("tests/integration/data/slow/slow.yaml", [](v1::KernelSpec& spec) {
        spec.mutable_search()->set_strategy("random");
        spec.mutable_search()->set_max_candidates(2);
      }));
  ASSERT_GT(fast.job_id(), 0);
  const std::string id = std::to_string(fast.job_id());
  const ProcessResult watched = RunCli(address(), {"watch", id}, 180);
  EXPECT_EQ(watched.exit_code, 0) << watched.output << worker->Log();
  EXPECT_THAT(watched.output, HasSubstr("job " + id + " succeeded ["));
  EXPECT_THAT(watched.output, HasSubstr("job " + id + " succeeded: kernel spin on "));
  EXPECT_THAT(watched.output, HasSubstr("PROBLEM"));

  // No worker has the device this job needs: it waits until cancelled.
  const v1::Job waiting =
      SubmitSpec(*client_, LoadTestSpec("examples/cuda/transpose/transpose.yaml"));
  ASSERT_GT(waiting.job_id(), 0);
  const std::string waiting_id = std::to_string(waiting.job_id());
  auto watcher = StartCli({"watch", waiting_id}, "watch.log");
  ASSERT_TRUE(WaitFor(
      [&] { return watcher->Log().find("job " + waiting_id + " queued") != std::string::npos; },
      seconds(20)))
      << watcher->Log();
  EXPECT_EQ(RunCli(address(), {"cancel", waiting_id}).exit_code, 0);
  EXPECT_EQ(ExitCode(*watcher, seconds(20)), 1) << watcher->Log();
  EXPECT_THAT(watcher->Log(), HasSubstr("job " + waiting_id + " cancelled"));
  EXPECT_EQ(RunCli(address(), {"watch", "999"}).exit_code, 4);
}

TEST_F(WatchTest, CtrlCOfSubmitWaitSaysTheJobContinuesAndHowToFollowIt) {
  // No worker: the job stays queued.
  auto submitter = StartCli(
      {"submit", SourcePath("examples/cuda/transpose/transpose.yaml"), "--wait"}, "submit.log");
  ASSERT_TRUE(
      WaitFor([&] { return submitter->Log().find("queued") != std::string::npos; }, seconds(30)))
      << submitter->Log();
  ASSERT_EQ(kill(submitter->pid(), SIGINT), 0);
  EXPECT_EQ(ExitCode(*submitter, seconds(10)), 130) << submitter->Log();
  auto jobs = client_->ListJobs(1);
  ASSERT_TRUE(jobs.ok() && jobs->size() == 1);
  const std::string id = std::to_string((*jobs)[0].job_id());
  EXPECT_THAT(submitter->Log(),
              HasSubstr("job " + id +
                        " continues on the coordinator: `tunefleet "
                        "watch " +
                        id + "` to follow it, `tunefleet cancel " + id + "` to stop it\n"));
  EXPECT_EQ((*jobs)[0].state(), v1::JOB_STATE_QUEUED);
}

}  // namespace
}  // namespace tf::testing
