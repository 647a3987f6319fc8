// The one progress reporter of the command-line front ends (`clustersim run`, `clustersim
// calibrate` and its back-end executables): a line on stderr that appears only once a job has
// taken over a second. On a terminal it is redrawn in place five times a second; in a log it is a
// new line every five seconds, so logs stay readable. A fraction or a step count (done of total),
// optionally followed by what is happening now (a calibration phase such as "all_reduce").
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <string>
#include <string_view>

namespace clustersim::cli {

class Progress {
 public:
  // Reports on stderr, redrawn in place when stderr is a terminal.
  explicit Progress(std::string what);
  // Reports on `out`; `terminal` chooses redrawing in place over one line per report, and nothing
  // is printed before `quiet_for` has passed (tests pass 0).
  Progress(std::string what, std::FILE* out, bool terminal,
           std::chrono::milliseconds quiet_for = std::chrono::seconds(1));
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // 0..1, or < 0 when unknown (only the elapsed time is shown); cheap when nothing is printed.
  void update(double fraction, std::string_view detail = {});
  // Step `done` of `total` (total 0 reports nothing).
  void update(std::size_t done, std::size_t total, std::string_view detail = {});
  // Ends a line redrawn in place; further updates start a new one.
  void done();

 private:
  std::string what_;
  std::FILE* out_;
  bool tty_;
  std::chrono::milliseconds quiet_for_;
  std::chrono::steady_clock::time_point began_;
  std::chrono::steady_clock::time_point last_print_;
  bool printed_ = false;
  std::size_t last_length_ = 0;  // of the line on screen, to blank a longer previous one
};

}  // namespace clustersim::cli
