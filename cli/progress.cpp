#include "cli/progress.hpp"

#include <unistd.h>

namespace clustersim::cli {

Progress::Progress(std::string what)
    : Progress(std::move(what), stderr, ::isatty(STDERR_FILENO) != 0) {}

Progress::Progress(std::string what, std::FILE* out, bool terminal,
                   std::chrono::milliseconds quiet_for)
    : what_(std::move(what)),
      out_(out),
      tty_(terminal),
      quiet_for_(quiet_for),
      began_(std::chrono::steady_clock::now()),
      last_print_(began_) {}

Progress::~Progress() {
  done();
}

void Progress::update(double fraction, std::string_view detail) {
  using namespace std::chrono;
  const auto now = steady_clock::now();
  if (now - began_ < quiet_for_) return;
  // A terminal gets a line redrawn five times a second; a log gets a line every five seconds.
  const auto every = tty_ ? milliseconds(200) : milliseconds(5000);
  if (printed_ && now - last_print_ < every) return;
  last_print_ = now;
  const double elapsed = duration<double>(now - began_).count();
  char head[64];
  // A phase that cannot tell how far it is shows only the time it has taken.
  if (fraction < 0.0)
    std::snprintf(head, sizeof head, ": (%.1f s)", elapsed);
  else
    std::snprintf(head, sizeof head, ": %3.0f%% (%.1f s)", fraction * 100.0, elapsed);
  std::string line = what_ + head;
  if (!detail.empty()) line += " " + std::string(detail);
  const std::size_t length = line.size();
  if (tty_ && length < last_length_) line.append(last_length_ - length, ' ');
  last_length_ = length;
  std::fprintf(out_, "%s%s%s", tty_ ? "\r" : "", line.c_str(), tty_ ? "" : "\n");
  std::fflush(out_);
  printed_ = true;
}

void Progress::update(std::size_t done, std::size_t total, std::string_view detail) {
  if (total == 0) return;
  update(static_cast<double>(done) / static_cast<double>(total), detail);
}

void Progress::done() {
  if (printed_ && tty_) std::fputc('\n', out_);
  printed_ = false;
  last_length_ = 0;
}

}  // namespace clustersim::cli
