#include "cli/phase_progress.hpp"

#include <unistd.h>

#include <condition_variable>

namespace clustersim::cli {

PhaseProgress::PhaseProgress(std::string what)
    : PhaseProgress(std::move(what), stderr, ::isatty(STDERR_FILENO) != 0, std::chrono::seconds(1),
                    std::chrono::milliseconds(200)) {}

PhaseProgress::PhaseProgress(std::string what, std::FILE* out, bool terminal,
                             std::chrono::milliseconds quiet_for, std::chrono::milliseconds tick)
    : progress_(std::move(what), out, terminal, quiet_for),
      ticker_([this, tick](std::stop_token stop) { redraw(stop, tick); }) {}

PhaseProgress::~PhaseProgress() {
  ticker_.request_stop();
  ticker_.join();
  done();
}

models::ProgressFn PhaseProgress::callback() {
  return [this](std::string_view phase, double fraction) { report(phase, fraction); };
}

void PhaseProgress::done() {
  const std::lock_guard lock(mutex_);
  progress_.done();
  paused_ = true;
  marks_.emplace_back(std::string(), Clock::now());
}

std::vector<std::pair<std::string, double>> PhaseProgress::phase_seconds() {
  const std::lock_guard lock(mutex_);
  std::vector<std::pair<std::string, double>> out;
  for (std::size_t i = 0; i + 1 < marks_.size(); ++i) {
    if (marks_[i].first.empty()) continue;
    const std::chrono::duration<double> d = marks_[i + 1].second - marks_[i].second;
    out.emplace_back(marks_[i].first, d.count());
  }
  return out;
}

void PhaseProgress::report(std::string_view phase, double fraction) {
  const std::lock_guard lock(mutex_);
  if (marks_.empty() || marks_.back().first != phase) marks_.emplace_back(phase, Clock::now());
  phase_ = phase;
  fraction_ = fraction;
  paused_ = false;
  progress_.update(fraction_, phase_);
}

void PhaseProgress::redraw(std::stop_token stop, std::chrono::milliseconds tick) {
  std::mutex sleep_mutex;
  std::condition_variable_any wake;
  std::unique_lock sleep_lock(sleep_mutex);
  // Wakes every `tick`, and at once when stopped.
  while (!stop.stop_requested()) {
    wake.wait_for(sleep_lock, stop, tick, [] { return false; });
    if (stop.stop_requested()) return;
    const std::lock_guard lock(mutex_);
    if (!paused_) progress_.update(fraction_, phase_);
  }
}

}  // namespace clustersim::cli
