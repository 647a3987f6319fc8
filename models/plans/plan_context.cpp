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

std::vector<std::uint64_t> stage_tensor_counts(const PlanContext& ctx) {
  std::vector<std::uint64_t> tensors(static_cast<std::size_t>(ctx.parallel.pp), 0);
  for (int stage = 0; stage < ctx.parallel.pp; ++stage)
    ctx.for_each_stage_layer(stage, [&](int l) {
      std::uint64_t experts = 0;
      for (const auto& t : ctx.layers[static_cast<std::size_t>(l)].tensors)
        (t.expert >= 0 ? experts : tensors[static_cast<std::size_t>(stage)]) += 1;
      tensors[static_cast<std::size_t>(stage)] +=
          experts / static_cast<std::uint64_t>(ctx.parallel.ep);
    });
  return tensors;
}

std::vector<std::uint64_t> tp_replicated_grad_bytes(const PlanContext& ctx) {
  std::vector<std::uint64_t> bytes(static_cast<std::size_t>(ctx.parallel.pp), 0);
  if (ctx.parallel.tp < 2 || !ctx.parallel.sequence_parallel || ctx.transformer == nullptr)
    return bytes;
  for (int stage = 0; stage < ctx.parallel.pp; ++stage)
    ctx.for_each_stage_layer(stage, [&](int l) {
      for (const auto& t : ctx.layers[static_cast<std::size_t>(l)].tensors)
        if (t.tp_replicated)
          bytes[static_cast<std::size_t>(stage)] +=
              static_cast<std::uint64_t>(t.count) *
              static_cast<std::uint64_t>(ctx.gradient_bytes());
    });
  return bytes;
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
