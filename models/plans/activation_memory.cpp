#include "models/plans/activation_memory.hpp"

#include "models/plans/recompute_layers.hpp"

namespace clustersim::models {

kernels::RecomputePolicy recompute_policy(Recompute r) {
  switch (r) {
    case Recompute::none:
      return kernels::RecomputePolicy::none;
    case Recompute::selective:
      return kernels::RecomputePolicy::selective;
    case Recompute::full:
      return kernels::RecomputePolicy::full;
    case Recompute::selective_op:
      return kernels::RecomputePolicy::selective_op;
  }
  return kernels::RecomputePolicy::none;
}

ActivationMemory::ActivationMemory(const PlanContext& ctx,
                                   const kernels::TransformerKernelConfig* config)
    : policy_(recompute_policy(ctx.training.recompute)) {
  layers_.resize(ctx.layers.size());
  group_.assign(ctx.layers.size(), -1);
  // Full recompute re-runs the layers of its checkpoint groups only (recompute_layers.hpp).
  const bool full = policy_ == kernels::RecomputePolicy::full;
  const RecomputeGroups groups = full_recompute_groups(ctx);
  if (ctx.transformer == nullptr || config == nullptr) {
    // A layer list: its activation_bytes are per sample at 16 bits.
    const double scale = ctx.training.micro_batch * ctx.element_bytes() / 2.0;
    for (std::size_t i = 0; i < layers_.size(); ++i) {
      const double bytes = ctx.layers[i].activation_bytes * scale;
      const bool recomputed = full && groups.recomputed(static_cast<int>(i));
      layers_[i] = {recomputed ? 0.0 : bytes, bytes, 0, 0};
      // Its recompute brings the layer's activations back before its backward (the memory walk
      // finds them through the group).
      if (recomputed) group_[i] = groups.group[i];
    }
    return;
  }
  transformer_ = true;
  kernels::TransformerKernelConfig dense = *config;
  dense.num_experts = 0;
  embedding_ = kernels::embedding_saved(*config);
  attention_ = kernels::attention_block_saved(*config);
  mlp_ = kernels::mlp_block_saved(dense);
  if (config->num_experts > 0) moe_ = kernels::mlp_block_saved(*config);
  head_ = kernels::lm_head_saved(*config);
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    const LayerCost& l = ctx.layers[i];
    const kernels::LayerSavedTensors* s = saved(l.role);
    if (s == nullptr) continue;
    const bool block = l.role != LayerRole::embedding && l.role != LayerRole::head;
    const int layer = static_cast<int>(i);
    // A block that full recompute leaves alone (recompute_method: block) keeps everything.
    const kernels::RecomputePolicy policy =
        full && !groups.recomputed(layer) ? kernels::RecomputePolicy::none : policy_;
    double kept = kernels::kept_bytes(*s, policy, block);
    const double all = kept + kernels::recomputed_bytes(*s, policy, block);
    // Inside a uniform group only the first block's input is the checkpoint's.
    if (full && groups.recomputed(layer) && !groups.opens[i]) kept = 0;
    layers_[i] = {kept, all, s->transient_forward, s->transient_backward};
    if (full && l.block >= 0)
      group_[i] = groups.group[i];
    else if (policy_ == kernels::RecomputePolicy::selective_op && l.block >= 0)
      group_[i] = l.block;
  }
}

const kernels::LayerSavedTensors* ActivationMemory::saved(LayerRole role) const {
  if (!transformer_) return nullptr;
  switch (role) {
    case LayerRole::embedding:
      return &embedding_;
    case LayerRole::attention:
      return &attention_;
    case LayerRole::mlp:
      return &mlp_;
    case LayerRole::moe:
      return &moe_;
    case LayerRole::head:
      return &head_;
    case LayerRole::generic:
      return nullptr;
  }
  return nullptr;
}

}  // namespace clustersim::models
