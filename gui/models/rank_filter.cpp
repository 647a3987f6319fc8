#include "gui/models/rank_filter.hpp"

#include <algorithm>
#include <numeric>

#include "models/plans/plan_context.hpp"

namespace clustersim::gui {

std::vector<engine::Rank> ranks_in(RankScope scope, engine::Rank rank,
                                   const models::Prediction& prediction) {
  const auto world = prediction.output.built.schedule.num_ranks;
  std::vector<engine::Rank> out;
  if (world == 0) return out;
  rank = std::min(rank, world - 1);
  const models::RankLayout layout = models::rank_layout(prediction.scenario.parallel);
  using models::Axis;
  switch (scope) {
    case RankScope::all:
      out.resize(world);
      std::iota(out.begin(), out.end(), engine::Rank{0});
      break;
    case RankScope::stage:  // everything but the pipeline coordinate varies
      out = layout.group(rank, {Axis::tp, Axis::ep, Axis::dp});
      break;
    case RankScope::replica:  // one data-parallel index: its tp × pp ranks
      out = layout.group(rank, {Axis::tp, Axis::pp});
      break;
    case RankScope::node: {
      const auto& topology = prediction.output.topology;
      for (engine::Rank r = 0; r < world; ++r)
        if (topology.node_of(r) == topology.node_of(rank)) out.push_back(r);
      break;
    }
  }
  return out;
}

}  // namespace clustersim::gui
