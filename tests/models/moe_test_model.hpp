// The small MoE model several plan tests build on: h = 1024, 8 heads, a dense ffn of 4096, and 8
// SwiGLU experts of ffn 2048, top-2, without imbalance (so every rank routes exactly top_k copies
// of its tokens); `layers` blocks. A scenario's `model:` line.
#pragma once

#include <string>

namespace clustersim::models {

inline std::string small_moe_model(int layers) {
  return "model: {num_layers: " + std::to_string(layers) +
         ", hidden_size: 1024, num_heads: 8, ffn_hidden_size: 4096,\n"
         "        vocab_size: 32000, activation: swiglu, norm: rmsnorm, bias: false,\n"
         "        learned_positions: false,\n"
         "        moe: {num_experts: 8, top_k: 2, expert_ffn_hidden_size: 2048, imbalance: 1}}\n";
}

}  // namespace clustersim::models
