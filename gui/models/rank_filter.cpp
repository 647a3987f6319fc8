#include "gui/models/rank_filter.hpp"

#include <algorithm>
#include <numeric>

#include "models/plans/plan_context.hpp"

namespace clustersim::gui {

std::vector<engine::Rank> ranks_in(RankScope scope, engine::Rank rank,
                                   const models::Prediction& prediction) {
  const auto& schedule = prediction.output.built.schedule;
  const auto world = schedule.num_ranks;
  std::vector<engine::Rank> out;
  if (world == 0) return out;
  rank = std::min(rank, world - 1);
  // A folded run has lanes for replica 0's ranks only: a folded rank shows its mirror.
  if (!schedule.simulated(rank)) rank = schedule.mirror[rank];
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
  std::erase_if(out, [&](engine::Rank r) { return !schedule.simulated(r); });
  return out;
}

}  // namespace clustersim::gui
