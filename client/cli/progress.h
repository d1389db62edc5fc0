// Progress of a watched job. On a terminal one line is redrawn in place; in a
// log or pipe a plain line is written at most once per second, so that logs
// stay readable, and at once on every change of phase (state, builds done,
// re-timing, what the job waits for), after the last state of the phase
// before when that was not written: a log ends each phase, and the watch, on
// what the coordinator said last.
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
  // Ends the redrawn line, or writes the last state held back; the last state
  // stays visible.
  void Finish();

 private:
  std::string Line(const v1::Job& job) const;
  // Writes the plain line held back within the second, if any.
  void WriteHeldBack();

  std::FILE* out_;
  bool redraw_;
  std::chrono::steady_clock::time_point start_;
  int64_t done_at_start_ = -1;  // candidates done when watching began
  std::chrono::steady_clock::time_point last_print_;
  std::string last_phase_;
  std::string held_back_;  // plain: the last line not written, within the second
  bool printed_ = false;
};

}  // namespace tf::cli
