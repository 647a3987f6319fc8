// FLOP counts that publishers use to turn a measured throughput into "TFLOP/s per GPU". A
// published TFLOP/s figure is tokens/s × the publisher's FLOPs per token, so comparing it with a
// simulation must use the same count: otherwise a difference of convention shows up as (or hides)
// an error of the prediction (docs/validation.md).
#pragma once

#include "models/model_spec.hpp"

namespace clustersim::models {

// Training FLOPs per token (forward and backward, no recompute) as NVIDIA Megatron-Bridge counts
// them for its "Model TFLOP/sec/GPU" (the NeMo 25.x performance tables;
// src/megatron/bridge/training/utils/flop_utils.py, `num_floating_point_operations`): per layer
// 4·h·(h + h·g/a + s/2) for attention (Q and O, K and V of g key-value heads, and the attention
// core with a causal mask counted half) plus 4·f·h (× 3/2 for SwiGLU) for the MLP, the LM head
// 2·h·V with V padded to a multiple of 128·tp, all × 3 for forward and backward. Head width h/a.
// Throws std::invalid_argument for a model the formula does not describe (MoE, latent attention).
double megatron_bridge_flops_per_token(const TransformerSpec& model, int seq_len, int tp);

}  // namespace clustersim::models
