#include "client/cli/progress.h"

#include "client/cli/text_format.h"
#include "client/job_state.h"

namespace tf::cli {
namespace {

constexpr int kBarWidth = 24;
constexpr auto kPlainInterval = std::chrono::seconds(1);

std::string Bar(int64_t done, int64_t total) {
  const int filled = total > 0 ? static_cast<int>(kBarWidth * done / total) : 0;
  return "[" + std::string(filled, '#') + std::string(kBarWidth - filled, '.') + "]";
}

// What writes a plain line at once when it changes.
std::string Phase(const v1::Job& job) {
  return std::string(client::JobStateName(job.state())) +
         (job.builds_done() < job.configurations() ? ", building" : "") +
         (job.problems_retiming() > 0 ? ", re-timing" : "") + "; " + job.waiting_for();
}

}  // namespace

JobProgress::JobProgress(std::FILE* out, bool redraw)
    : out_(out), redraw_(redraw), start_(std::chrono::steady_clock::now()) {}

std::string JobProgress::Line(const v1::Job& job) const {
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const int64_t done = job.candidates_done();
  const int64_t total = job.candidates_total();
  std::string line = "job " + std::to_string(job.job_id()) + " " +
                     client::JobStateName(job.state()) + " " + Bar(done, total) + " " +
                     std::to_string(done) + "/" + std::to_string(total) + " candidates, " +
                     std::to_string(job.candidates_failed()) + " failed, builds " +
                     std::to_string(job.builds_done()) + "/" +
                     std::to_string(job.configurations()) + ", " + FormatSeconds(elapsed);
  // The rate since watching began: earlier progress may come from a cache.
  // None while it waits (no device is left, ...): it would only grow.
  const int64_t progressed = done - done_at_start_;
  if (progressed > 0 && done < total && !client::IsTerminal(job.state()) &&
      job.waiting_for().empty()) {
    line += ", ETA " + FormatSeconds(elapsed * static_cast<double>(total - done) / progressed);
  }
  if (job.problems_retiming() > 0) {
    line += "; re-timing the finalists of " + std::to_string(job.problems_retiming()) +
            (job.problems_retiming() == 1 ? " problem" : " problems") + " in alternation";
  }
  if (!job.stop_reason().empty()) line += "; stopped: " + job.stop_reason();
  if (!job.waiting_for().empty()) line += "; " + job.waiting_for();
  return line;
}

void JobProgress::Update(const v1::Job& job) {
  if (done_at_start_ < 0) done_at_start_ = job.candidates_done();
  if (redraw_) {
    std::fprintf(out_, "\r\033[K%s", Line(job).c_str());
    std::fflush(out_);
    printed_ = true;
    return;
  }
  const auto now = std::chrono::steady_clock::now();
  std::string phase = Phase(job);
  const bool phase_changed = phase != last_phase_;
  last_phase_ = std::move(phase);
  if (!phase_changed && printed_ && now - last_print_ < kPlainInterval) {
    held_back_ = Line(job);
    return;
  }
  if (phase_changed) WriteHeldBack();
  held_back_.clear();  // this line is newer
  std::fprintf(out_, "%s\n", Line(job).c_str());
  std::fflush(out_);
  last_print_ = now;
  printed_ = true;
}

void JobProgress::WriteHeldBack() {
  if (held_back_.empty()) return;
  std::fprintf(out_, "%s\n", held_back_.c_str());
  std::fflush(out_);
  held_back_.clear();
}

void JobProgress::Note(const std::string& text) {
  WriteHeldBack();
  if (redraw_ && printed_) std::fprintf(out_, "\n");
  std::fprintf(out_, "%s\n", text.c_str());
  std::fflush(out_);
  printed_ = false;  // the next update starts a fresh line
}

void JobProgress::Finish() {
  WriteHeldBack();
  if (redraw_ && printed_) std::fprintf(out_, "\n");
}

}  // namespace tf::cli
