#include "models/plans/recompute_layers.hpp"

#include <algorithm>

namespace clustersim::models {

RecomputeGroups full_recompute_groups(const PlanContext& ctx) {
  const std::size_t n = ctx.layers.size();
  RecomputeGroups out{std::vector<int>(n, -1), std::vector<bool>(n, false)};
  const TrainingConfig& t = ctx.training;
  if (t.recompute != Recompute::full) return out;
  const int per = std::max(1, t.recompute_num_layers);
  int next_group = 0;
  // Dualpipe's reverse-direction chunks repeat a stage's layers: the same positions, the same
  // groups, so the first pp · v chunks decide.
  const std::size_t chunks =
      std::min(ctx.chunks.size(), static_cast<std::size_t>(ctx.parallel.pp) *
                                      static_cast<std::size_t>(ctx.parallel.virtual_stages));
  for (std::size_t g = 0; g < chunks; ++g) {
    int position = -1;  // of the current block in the chunk
    int last_block = -1;
    int group = -1;
    bool opening = false;
    for (const int li : ctx.chunks[g]) {
      const LayerCost& l = ctx.layers[static_cast<std::size_t>(li)];
      if (l.role == LayerRole::embedding || l.role == LayerRole::head) continue;
      const bool new_block = l.role == LayerRole::generic || l.block != last_block || position < 0;
      last_block = l.block;
      if (new_block) {
        ++position;
        const bool in_group = t.recompute_method == RecomputeMethod::uniform || position < per;
        opening = in_group && (t.recompute_method == RecomputeMethod::block || position % per == 0);
        if (!in_group)
          group = -1;
        else if (opening)
          group = next_group++;
      }
      out.group[static_cast<std::size_t>(li)] = group;
      out.opens[static_cast<std::size_t>(li)] = opening;
    }
  }
  return out;
}

}  // namespace clustersim::models
