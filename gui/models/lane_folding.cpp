#include "gui/models/lane_folding.hpp"

#include <algorithm>

namespace clustersim::gui {

void LaneFolding::set_folded(engine::Rank rank, bool folded) {
  if (folded == all_)
    exceptions_.erase(rank);
  else
    exceptions_.insert(rank);
}

std::vector<LaneRange> timeline_rows(const TimelineStore& store,
                                     const std::vector<engine::Rank>& ranks,
                                     const LaneFolding& folding) {
  std::vector<LaneRange> rows;
  std::size_t lane = 0;
  while (lane < store.lane_count()) {
    const engine::Rank rank = store.lane(lane).rank;
    const LaneRange all = store.rank_lanes(rank);
    lane = all.first + all.count;
    if (!ranks.empty() && !std::binary_search(ranks.begin(), ranks.end(), rank)) continue;
    if (folding.folded(rank)) {
      rows.push_back(all);
    } else {
      for (std::size_t l = all.first; l < all.first + all.count; ++l)
        rows.push_back({l, 1});
    }
  }
  return rows;
}

}  // namespace clustersim::gui
