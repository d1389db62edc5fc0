// coordinator/build_queue.h: every build that starts is told to the observer
// (the build metrics), with what it resolved: also one cancelled midway and
// one that fails before any compiler run, which were not counted at all.
#include "coordinator/build_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>

#include "kernelspec/config.h"
#include "kernelspec/spec_loader.h"
#include "tests/test_util.h"

namespace tf::coordinator {
namespace {

using std::chrono::seconds;
using testing::WaitFor;

class RecordingObserver : public Observer {
 public:
  void OnBuildFinished(const compiler::BuildStats& stats, BuildSite site) override {
    EXPECT_EQ(site, BuildSite::kCoordinator);
    std::lock_guard lock(mu_);
    builds_.push_back(stats);
  }
  std::vector<compiler::BuildStats> builds() {
    std::lock_guard lock(mu_);
    return builds_;
  }

 private:
  std::mutex mu_;
  std::vector<compiler::BuildStats> builds_;
};

class BuildQueueTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = compiler::ArtifactStore::Open(dir_ / "artifacts");
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(*store);
    auto loaded =
        kernelspec::LoadSpecFile(testing::SourcePath("tests/integration/data/slow/slow.yaml"));
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    task_.job_id = 7;
    task_.spec = loaded->spec;
    task_.sources = loaded->sources;
    task_.arch = "host";
    for (int ms = 1; ms <= 4; ++ms) {
      auto config = kernelspec::ParseConfigKey("MS=" + std::to_string(ms));
      ASSERT_TRUE(config.ok()) << config.status().ToString();
      task_.configs.push_back(*config);
    }
  }

  // One configuration per compiler run, one run at a time.
  std::unique_ptr<BuildQueue> Queue(BuildQueue::BatchCallback on_batch) {
    compiler::BuildOptions options;
    options.batch_size = 1;
    options.parallelism = 1;
    return std::make_unique<BuildQueue>(*store_, options, std::move(on_batch), observer_);
  }

  // The one build the observer was told of.
  compiler::BuildStats TheBuild() {
    EXPECT_TRUE(WaitFor([&] { return !observer_.builds().empty(); }, seconds(60)))
        << "the build was not counted";
    std::vector<compiler::BuildStats> builds = observer_.builds();
    EXPECT_EQ(builds.size(), 1u);
    return builds.empty() ? compiler::BuildStats() : builds[0];
  }

  testing::TempDir dir_;
  std::unique_ptr<compiler::ArtifactStore> store_;
  RecordingObserver observer_;
  BuildTask task_;
};

TEST_F(BuildQueueTest, ABuildCancelledMidwayCountsWhatItBuilt) {
  std::atomic<int64_t> delivered{0};
  BuildQueue* queue = nullptr;
  auto owned = Queue([&](int64_t job_id, std::vector<compiler::ConfigBuild> builds) {
    delivered += static_cast<int64_t>(builds.size());
    queue->CancelJob(job_id);  // the job is cancelled once its first batch is in
  });
  queue = owned.get();
  queue->Enqueue(task_);

  const compiler::BuildStats stats = TheBuild();
  EXPECT_GE(stats.configs, 1);
  EXPECT_LT(stats.configs, 4) << "not cancelled midway";
  EXPECT_EQ(stats.configs, delivered.load());
  EXPECT_EQ(stats.failed_configs, 0);
  EXPECT_GT(stats.wall_seconds, 0);
}

TEST_F(BuildQueueTest, ABuildThatFailsBeforeCompilingCountsEveryConfigurationFailed) {
  task_.sources.clear();  // refused by the builder before any compiler run
  std::mutex mu;
  std::vector<compiler::ConfigBuild> outcomes;
  auto queue = Queue([&](int64_t, std::vector<compiler::ConfigBuild> builds) {
    std::lock_guard lock(mu);
    outcomes.insert(outcomes.end(), builds.begin(), builds.end());
  });
  queue->Enqueue(task_);

  const compiler::BuildStats stats = TheBuild();
  EXPECT_EQ(stats.configs, 4);
  EXPECT_EQ(stats.failed_configs, 4);
  EXPECT_EQ(stats.compiler_runs, 0);
  std::lock_guard lock(mu);
  ASSERT_EQ(outcomes.size(), 4u);
  for (const compiler::ConfigBuild& build : outcomes) {
    EXPECT_FALSE(build.ok);
    EXPECT_EQ(build.diagnostics.rfind("build failed: ", 0), 0u) << build.diagnostics;
  }
}

}  // namespace
}  // namespace tf::coordinator
