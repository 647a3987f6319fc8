#include "models/plans/plan_context.hpp"

#include <algorithm>
#include <variant>

namespace clustersim::models {

RankLayout rank_layout(const ParallelConfig& p) {
  return {p.tp, p.ep, p.dp, p.pp, p.order, p.cp};
}

PlanContext plan_context(const Scenario& sc, const std::vector<LayerCost>& layers,
                         const std::vector<std::vector<int>>& chunks, const RankLayout& layout) {
  return {layers,
          chunks,
          layout,
          sc.parallel,
          sc.training,
          std::get_if<TransformerSpec>(&sc.model.body),
          sc.cluster.topology.node.gpus,
          static_cast<int>(sc.num_microbatches())};
}

void post_pipeline_sends(const ParallelConfig& parallel, const RankLayout& layout,
                         engine::ScheduleBuilder& builder) {
  if (parallel.pp < 2 || !parallel.pp_sends_on_group()) return;
  int n = 0;
  for (engine::Rank r = 0; r < static_cast<engine::Rank>(layout.world_size()); ++r)
    if (layout.coords(r).pp == 0)
      builder.post_sends_on(
          builder.add_group(layout.pp_group(r), "pp[" + std::to_string(n++) + "]"));
}

engine::GroupId ProcessGroups::get(const std::vector<engine::Rank>& ranks, std::string_view kind) {
  auto [it, inserted] = ids_.try_emplace(ranks, 0);
  if (inserted) {
    const int index = count_[std::string(kind)]++;
    it->second = builder_.add_group(ranks, std::string(kind) + "[" + std::to_string(index) + "]");
  }
  const engine::GroupId id = it->second;
  if (log_ != nullptr &&
      std::none_of(log_->begin(), log_->end(), [id](const auto& e) { return e.first == id; }))
    log_->emplace_back(id, kind);
  return id;
}

}  // namespace clustersim::models
