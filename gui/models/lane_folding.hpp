// Folding a rank's streams (compute, comm, ...) into one row of the timeline: per rank, or all
// at once. The folded row is drawn from the same store (TimelineStore's LaneRange views), so
// folding copies no op.
#pragma once

#include <set>
#include <vector>

#include "gui/models/timeline_store.hpp"

namespace clustersim::gui {

class LaneFolding {
 public:
  bool folded(engine::Rank rank) const { return exceptions_.contains(rank) != all_; }
  void set_folded(engine::Rank rank, bool folded);
  void toggle(engine::Rank rank) { set_folded(rank, !folded(rank)); }
  // O(1) whatever the rank count: a flag, and the ranks that differ from it.
  void fold_all(bool folded) {
    all_ = folded;
    exceptions_.clear();
  }

 private:
  bool all_ = false;
  std::set<engine::Rank> exceptions_;
};

// The timeline's rows, top to bottom: for each rank of `ranks` (sorted; empty: every rank), one
// row of all its lanes when it is folded, else one row per lane.
std::vector<LaneRange> timeline_rows(const TimelineStore& store,
                                     const std::vector<engine::Rank>& ranks,
                                     const LaneFolding& folding);

}  // namespace clustersim::gui
