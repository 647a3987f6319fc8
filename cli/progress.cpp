#include "cli/progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace clustersim::cli {

Progress::Progress(std::string what)
    : what_(std::move(what)),
      began_(std::chrono::steady_clock::now()),
      last_print_(began_),
      tty_(::isatty(STDERR_FILENO) != 0) {}

Progress::~Progress() {
  done();
}

void Progress::update(double fraction) {
  using namespace std::chrono;
  const auto now = steady_clock::now();
  if (now - began_ < seconds(1)) return;
  // A terminal gets a line redrawn five times a second; a log gets a line every five seconds.
  const auto every = tty_ ? milliseconds(200) : milliseconds(5000);
  if (printed_ && now - last_print_ < every) return;
  last_print_ = now;
  const double elapsed = duration<double>(now - began_).count();
  std::fprintf(stderr, "%s%s: %3.0f%% (%.1f s)%s", tty_ ? "\r" : "", what_.c_str(),
               fraction * 100.0, elapsed, tty_ ? "" : "\n");
  std::fflush(stderr);
  printed_ = true;
}

void Progress::done() {
  if (printed_ && tty_) std::fputc('\n', stderr);
  printed_ = false;
}

}  // namespace clustersim::cli
