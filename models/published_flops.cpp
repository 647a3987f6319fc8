#include "models/published_flops.hpp"

#include <stdexcept>

namespace clustersim::models {

double megatron_bridge_flops_per_token(const TransformerSpec& m, int seq_len, int tp) {
  if (m.moe || m.mla)
    throw std::invalid_argument(
        "Megatron-Bridge's FLOP count is implemented here for dense transformers with q, k, v "
        "projections only (no MoE, no latent attention)");
  if (m.num_layers <= 0 || m.hidden_size <= 0 || m.num_heads <= 0 || seq_len <= 0 || tp <= 0)
    throw std::invalid_argument(
        "Megatron-Bridge's FLOP count needs layers, hidden size, heads, "
        "sequence length and tp > 0");
  const double h = static_cast<double>(m.hidden_size);
  const double kv_heads = m.num_kv_heads > 0 ? m.num_kv_heads : m.num_heads;
  const double s = seq_len;
  const double attention = 4.0 * h * (h + h * kv_heads / m.num_heads + s / 2.0);
  const double gated = m.activation == Activation::swiglu ? 1.5 : 1.0;
  const double mlp = 4.0 * static_cast<double>(m.ffn_hidden_size) * h * gated;
  // Megatron pads the vocabulary to a multiple of make_vocab_size_divisible_by (128) × tp.
  const long multiple = 128L * tp;
  const double vocab = static_cast<double>((m.vocab_size + multiple - 1) / multiple * multiple);
  const double logits = 2.0 * h * vocab;
  return 3.0 * (m.num_layers * (attention + mlp) + logits);
}

}  // namespace clustersim::models
