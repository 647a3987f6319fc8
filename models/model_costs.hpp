// A model expanded into the layers a schedule is built from, with their parameters, FLOPs and
// activation memory (per sample, at a given sequence length).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/model_spec.hpp"

namespace clustersim::models {

// What a layer is, set once where the model is expanded; plans and the memory model ask this,
// never the layer's name.
enum class LayerRole : std::uint8_t {
  embedding,  // token (and position) embedding, vocabulary-parallel under TP
  attention,  // a transformer block's norm + self-attention
  mlp,        // a transformer block's norm + dense MLP
  moe,        // a transformer block's norm + router + experts (replaces mlp)
  head,       // final norm + logits (+ loss)
  generic,    // a layer of a layer list: no shape to split
};

// Within a layer: what a parameter tensor is.
enum class TensorRole : std::uint8_t { weight, bias, norm, embedding, router, expert, shared };

struct ParamTensor {
  std::string name;  // "L3.attn.qkv.weight"
  double count = 0;
  TensorRole role = TensorRole::weight;
  int expert = -1;  // the routed expert it belongs to (role expert), -1 otherwise
  // Every tensor-parallel rank holds all of it (Megatron-Core duplicates norms, the MoE router
  // and latent attention's down-projections) instead of a 1/tp shard. Under sequence
  // parallelism each rank's gradient covers its own tokens, so these are all-reduced over TP.
  bool tp_replicated = false;
};

// A tensor's elements on one rank of `tp` tensor-parallel ranks (of a sharded layer).
inline double tp_local_count(const ParamTensor& t, int tp) {
  return t.tp_replicated ? t.count : t.count / tp;
}

struct LayerCost {
  std::string name;  // "embedding", "L3.attn", "L3.mlp", "lm_head", "conv1"
  LayerRole role = LayerRole::generic;
  int block = -1;                    // transformer block index, -1 otherwise
  std::vector<ParamTensor> tensors;  // in forward (parameter registration) order
  double params = 0;                 // sum of tensors
  double forward_flops = 0;          // per sample
  double backward_flops = 0;         // per sample
  double activation_bytes = 0;       // kept for backward, per sample, 16-bit activations
  double memory_bytes = 0;           // moved by the forward per sample besides the weights
};

// Transformer: per block an "attn" and an "mlp" layer, plus "embedding" first and "lm_head"
// (final norm + logits) last. FLOPs: 24·s·h² + 4·s²·h per block for the GPT shape (generalized to
// GQA and SwiGLU), 2·s·h·V for the logits; backward twice forward. Activations: Korthikanti et
// al. 2022, s·h·(34 + 5·a·s/h) bytes per block and sample.
std::vector<LayerCost> expand_model(const ModelSpec& model, int seq_len);

double total_params(const std::vector<LayerCost>& layers);

}  // namespace clustersim::models
