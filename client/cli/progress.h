// Progress of a watched job. On a terminal one line is redrawn in place; in a
// log or pipe a plain line is written at most once per second, and on every
// change of state, so that logs stay readable.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include "tunefleet/v1/tunefleet.pb.h"

namespace tf::cli {

namespace v1 = ::tunefleet::v1;

class JobProgress {
 public:
  // `out` is a terminal when `redraw` is true.
  JobProgress(std::FILE* out, bool redraw);

  void Update(const v1::Job& job);
  // A line of its own (the coordinator went away, ...), under the progress.
  void Note(const std::string& text);
  // Ends the redrawn line; the last state stays visible.
  void Finish();

 private:
  std::string Line(const v1::Job& job) const;

  std::FILE* out_;
  bool redraw_;
  std::chrono::steady_clock::time_point start_;
  int64_t done_at_start_ = -1;  // candidates done when watching began
  std::chrono::steady_clock::time_point last_print_;
  v1::JobState last_state_ = v1::JOB_STATE_UNSPECIFIED;
  bool printed_ = false;
};

}  // namespace tf::cli
