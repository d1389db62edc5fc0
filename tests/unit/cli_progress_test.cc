#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

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

}  // namespace
}  // namespace tf::cli
