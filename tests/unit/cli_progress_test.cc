#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "client/cli/progress.h"

namespace tf::cli {
namespace {

// What a plain (not redrawn) progress line says for `job`.
std::string PlainLine(const v1::Job& job) {
  char* text = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&text, &size);
  {
    JobProgress progress(out, /*redraw=*/false);
    progress.Update(job);
  }
  std::fclose(out);
  std::string line(text, size);
  std::free(text);
  return line;
}

TEST(JobProgressTest, SaysCandidatesBuildsAndTheProblemsBeingRetimed) {
  v1::Job job;
  job.set_job_id(7);
  job.set_state(v1::JOB_STATE_RUNNING);
  job.set_candidates_total(40);
  job.set_candidates_done(10);
  job.set_candidates_failed(2);
  job.set_configurations(20);
  job.set_builds_done(20);
  const std::string line = PlainLine(job);
  EXPECT_EQ(line.rfind("job 7 running [######..................] 10/40 candidates, 2 failed, "
                       "builds 20/20, ",
                       0),
            0u)
      << line;
  EXPECT_EQ(line.find("re-timing"), std::string::npos) << line;

  job.set_candidates_done(40);
  job.set_problems_retiming(1);
  EXPECT_NE(PlainLine(job).find("; re-timing the finalists of 1 problem in alternation"),
            std::string::npos);
  job.set_problems_retiming(3);
  EXPECT_NE(PlainLine(job).find("; re-timing the finalists of 3 problems in alternation"),
            std::string::npos);
}

// In a log, updates within the second are held back, but the last one
// before a change of phase, or the end, is written: the log never stays on a
// state the coordinator has left.
TEST(JobProgressTest, APlainLogWritesTheLastStateHeldBackBeforeANewPhaseAndAtTheEnd) {
  char* text = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&text, &size);
  v1::Job job;
  job.set_job_id(7);
  job.set_state(v1::JOB_STATE_RUNNING);
  job.set_candidates_total(300);
  job.set_configurations(224);
  {
    JobProgress progress(out, /*redraw=*/false);
    for (int builds = 200; builds <= 224; builds += 8) {
      job.set_builds_done(builds);
      progress.Update(job);  // 200 written, 208 and 216 held back
    }
    for (int done = 1; done <= 3; ++done) {
      job.set_candidates_done(done);
      progress.Update(job);  // 1 held back, 2 replaces it, 3 too
    }
    progress.Finish();
  }
  std::fclose(out);
  const std::string log(text, size);
  std::free(text);
  std::vector<std::string> lines;
  for (size_t at = 0, end; (end = log.find('\n', at)) != std::string::npos; at = end + 1) {
    lines.push_back(log.substr(at, end - at));
  }
  ASSERT_EQ(lines.size(), 4u) << log;
  EXPECT_NE(lines[0].find("0/300 candidates, 0 failed, builds 200/224"), std::string::npos);
  EXPECT_NE(lines[1].find("0/300 candidates, 0 failed, builds 216/224"), std::string::npos);
  EXPECT_NE(lines[2].find("0/300 candidates, 0 failed, builds 224/224"), std::string::npos);
  EXPECT_NE(lines[3].find("3/300 candidates, 0 failed, builds 224/224"), std::string::npos);
}

}  // namespace
}  // namespace tf::cli
