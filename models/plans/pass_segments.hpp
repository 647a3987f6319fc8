// One pipeline pass (a forward or a backward step of one micro-batch) as a list of units that
// emit its ops in order, cut into segments where the pass waits on communication it has put in
// flight on a stream of its own (dualpipe's MoE all-to-alls). Run alone, a pass emits its units
// in order; two passes interleaved (dualpipe's F&B pair) alternate segments on the compute
// stream, so that each one's communication runs beside the other's compute (DeepSeek-V3 §3.2.1,
// Figure 4; docs/dualpipe.md).
#pragma once

#include <cstddef>
#include <functional>
#include <utility>
#include <vector>

namespace clustersim::models {

class PassSegments {
 public:
  // `immediate`: a pass run alone, whose units run as they are added (nothing is stored: most
  // passes, millions on large plans, pay no allocation for the pieces).
  explicit PassSegments(bool immediate = false) : immediate_(immediate) {}

  // `unit` emits ops and returns true where it ends a segment (something left in flight that
  // the pass's next unit waits for).
  template <typename Unit>
  void add(Unit&& unit) {
    if (immediate_)
      unit();
    else
      units_.emplace_back(std::forward<Unit>(unit));
  }
  bool done() const { return next_ == units_.size(); }
  // Emits the units up to and including the next one that ends a segment (nothing when done).
  void run_segment() {
    while (next_ < units_.size())
      if (units_[next_++]()) return;
  }
  void run_all() {
    while (!done())
      run_segment();
  }

 private:
  bool immediate_ = false;
  std::vector<std::function<bool()>> units_;
  std::size_t next_ = 0;
};

// The F&B pair: a segment of `first`, a segment of `second`, and so on until both are done.
inline void interleave_passes(PassSegments& first, PassSegments& second) {
  while (!first.done() || !second.done()) {
    first.run_segment();
    second.run_segment();
  }
}

}  // namespace clustersim::models
