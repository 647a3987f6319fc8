// The activations one micro-batch leaves on a rank for each layer's backward (docs/memory.md
// "Activations"). Transformers take them from the saved-tensor lists that sit next to the kernel
// lists (kernels/saved_tensors.hpp), built once per layer shape from the same kernel
// configuration: attention implementation, fused kernels, activation function, tensor and
// sequence parallelism, MoE tokens per expert; the recompute policy then selects what stays.
// A layer list has only its activation_bytes (per sample, 16-bit): kept whole without recompute,
// nothing with full recompute (the layer re-runs from the previous layer's output).
#pragma once

#include <vector>

#include "models/kernels/saved_tensors.hpp"
#include "models/plans/plan_context.hpp"

namespace clustersim::models {

struct LayerActivation {
  double kept = 0;  // held from the layer's forward to its backward, per micro-batch
  double full = 0;  // what its backward needs: kept plus what recompute brings back
  double transient_forward = 0;
  double transient_backward = 0;
};

class ActivationMemory {
 public:
  // `config`: the kernel configuration of the transformer's lists (LayerKernels::config()); null
  // for a layer list.
  ActivationMemory(const PlanContext& ctx, const kernels::TransformerKernelConfig* config);

  const LayerActivation& at(int layer) const { return layers_[static_cast<std::size_t>(layer)]; }
  // Whether the recompute policy re-runs `layer` before its backward (full, selective_op: the
  // whole checkpointed block, once, before the block's last layer's backward; selective: the
  // attention core of each attention layer).
  bool recomputed(int layer) const { return at(layer).full > at(layer).kept; }
  // The checkpointed group a whole-block policy (full, selective_op) recomputes `layer` with,
  // before the backward of the group's last layer; -1 when none does (recompute_layers.hpp:
  // with full recompute a uniform group may span several blocks).
  int group(int layer) const { return group_[static_cast<std::size_t>(layer)]; }
  kernels::RecomputePolicy policy() const { return policy_; }
  // The saved-tensor lists by role (empty for a layer list): tests and reports.
  const kernels::LayerSavedTensors* saved(LayerRole role) const;

 private:
  std::vector<LayerActivation> layers_;
  std::vector<int> group_;
  kernels::RecomputePolicy policy_ = kernels::RecomputePolicy::none;
  kernels::LayerSavedTensors embedding_, attention_, mlp_, moe_, head_;
  bool transformer_ = false;
};

kernels::RecomputePolicy recompute_policy(Recompute recompute);

}  // namespace clustersim::models
