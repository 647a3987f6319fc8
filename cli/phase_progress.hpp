// The progress of a whole run on stderr (models::ProgressFn rendered): its phase, the share of the
// phase done where the phase can tell, and the time elapsed. A ticker thread redraws the line
// while a phase reports nothing (building a 10 M-op schedule, matching its collectives), so a long
// run never looks hung; cli::Progress decides when a line is printed (not in the first second; on
// a terminal redrawn in place, in a log a line every five seconds). It also notes when each phase
// began, for `clustersim run --timings`.
#pragma once

#include <mutex>
#include <stop_token>
#include <thread>
#include <utility>
#include <vector>

#include "cli/progress.hpp"  // chrono, cstdio, string, string_view
#include "models/run_scenario.hpp"

namespace clustersim::cli {

class PhaseProgress {
 public:
  explicit PhaseProgress(std::string what);
  // As cli::Progress's constructor; `tick` is how often the line is redrawn between reports.
  PhaseProgress(std::string what, std::FILE* out, bool terminal,
                std::chrono::milliseconds quiet_for, std::chrono::milliseconds tick);
  ~PhaseProgress();
  PhaseProgress(const PhaseProgress&) = delete;
  PhaseProgress& operator=(const PhaseProgress&) = delete;

  // For models::RunRequest::progress and models::write_trace; thread-safe.
  models::ProgressFn callback();
  // Ends the line on a terminal, before other output; a later report starts a new one.
  void done();
  // Each phase reported so far with its wall time, in order: from its first report to the next
  // phase's, the last one to the latest done(). A phase reported again after another counts as
  // a phase of its own.
  std::vector<std::pair<std::string, double>> phase_seconds();

 private:
  void report(std::string_view phase, double fraction);
  void redraw(std::stop_token stop, std::chrono::milliseconds tick);

  std::mutex mutex_;
  Progress progress_;
  std::string phase_;
  double fraction_ = models::kUnknownFraction;
  bool paused_ = true;  // no phase since the last done(): nothing to redraw
  using Clock = std::chrono::steady_clock;
  // When each phase began, and (empty name) when done() was called.
  std::vector<std::pair<std::string, Clock::time_point>> marks_;
  std::jthread ticker_;
};

}  // namespace clustersim::cli
