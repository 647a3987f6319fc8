#include "models/plan_kernel_times.hpp"

#include <algorithm>
#include <vector>

#include "engine/kernels.hpp"
#include "models/kernels/kernel_cost.hpp"
#include "models/kernels/transformer_kernels.hpp"
#include "models/plans/layer_kernels.hpp"
#include "models/plans/plan_context.hpp"

namespace clustersim::models {

namespace {

using kernels::Pass;

LayerKernelSeconds cost_layers(const Scenario& s, const PlanContext& ctx) {
  const TransformerSpec& t = *ctx.transformer;
  // An even router: the rank's tokens times top_k spread over the E experts, of which the rank
  // holds E/ep, each receiving the copies of ep ranks' tokens (the simulation adds the plan's
  // imbalance and capacity factor: expert_parallelism.hpp).
  double routed_copies = 0;
  if (t.moe) {
    const double tokens =
        static_cast<double>(s.training.micro_batch) * static_cast<double>(ctx.seq_len());
    routed_copies = tokens * t.moe->top_k;
  }
  const kernels::TransformerKernelConfig config = transformer_kernel_config(ctx, routed_copies);
  kernels::TransformerKernelConfig dense = config;
  dense.num_experts = 0;

  engine::KernelTable names;
  const GpuSpec& gpu = s.cluster.gpu;
  auto seconds = [&](const std::vector<engine::Kernel>& list) {
    return kernels::kernels_seconds(list, gpu);
  };
  LayerKernelSeconds out;
  const auto attention_forward = kernels::attention_block_kernels(config, Pass::forward, names);
  const auto mlp_forward = kernels::mlp_block_kernels(dense, Pass::forward, names);
  out.attention_forward = seconds(attention_forward);
  out.attention_backward = seconds(kernels::attention_block_kernels(config, Pass::backward, names));
  out.mlp_forward = seconds(mlp_forward);
  out.mlp_backward = seconds(kernels::mlp_block_kernels(dense, Pass::backward, names));
  if (t.moe) {
    out.moe_forward = seconds(kernels::mlp_block_kernels(config, Pass::forward, names));
    out.moe_backward = seconds(kernels::mlp_block_kernels(config, Pass::backward, names));
  }
  out.embedding_forward = seconds(kernels::embedding_kernels(config, Pass::forward, names));
  out.embedding_backward = seconds(kernels::embedding_kernels(config, Pass::backward, names));
  out.head_forward = seconds(kernels::lm_head_kernels(config, Pass::forward, names));
  out.head_backward = seconds(kernels::lm_head_kernels(config, Pass::backward, names));
  out.attention_core_forward =
      seconds(kernels::attention_core_kernels(config, Pass::forward, names));
  // As the schedule's selective_op recompute lists keep them (layer_kernels.cpp).
  std::vector<engine::Kernel> elementwise;
  for (const auto* list : {&attention_forward, &mlp_forward})
    for (const engine::Kernel& k : *list)
      if (k.kind == engine::KernelKind::memory) elementwise.push_back(k);
  out.elementwise_forward = elementwise.empty() ? 0 : seconds(elementwise);
  return out;
}

}  // namespace

std::optional<LayerKernelSeconds> PlanKernelTimes::get(const Scenario& s) {
  if (!std::holds_alternative<TransformerSpec>(s.model.body) ||
      !kernels::has_kernel_figures(s.cluster.gpu))
    return std::nullopt;
  // The kernel lists read the plan only through its context (no layers or chunks needed).
  const std::vector<LayerCost> no_layers;
  const std::vector<std::vector<int>> no_chunks;
  const RankLayout layout = rank_layout(s.parallel);
  const PlanContext ctx = plan_context(s, no_layers, no_chunks, layout);
  const TrainingConfig& tr = s.training;
  const ParallelConfig& p = s.parallel;
  const Key key{p.tp,
                std::max(1, p.cp),
                p.sequence_parallel,
                tr.micro_batch,
                p.ep,
                tr.seq_len,
                tr.precision,
                tr.attention,
                tr.fused_kernels,
                tr.eager_families,
                tr.gradient_accumulation_fusion,
                tr.amp,
                tr.loss_chunks,
                ctx.gradient_bytes(),
                p.pipeline_engine};
  std::lock_guard lock(mutex_);
  auto it = cache_.find(key);
  if (it == cache_.end()) it = cache_.emplace(key, cost_layers(s, ctx)).first;
  return it->second;
}

std::size_t PlanKernelTimes::shapes() const {
  std::lock_guard lock(mutex_);
  return cache_.size();
}

}  // namespace clustersim::models
