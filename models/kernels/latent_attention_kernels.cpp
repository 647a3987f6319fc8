// Multi-head latent attention's projection kernels (DeepSeek-V2 §2.1, as Megatron-Core's
// MLASelfAttention runs them under tensor and sequence parallelism: docs/parallelism.md "Latent
// attention"). The attention core itself is transformer_kernels.cpp's, with latent head widths.
#include <string>

#include "models/kernels/element_bytes.hpp"
#include "models/kernels/transformer_parts.hpp"

namespace clustersim::models::kernels {
namespace {

using detail::Emitter;
using detail::linear;

// A latent's RMSNorm (DeepSeek's q_a_layernorm, kv_a_layernorm), fused: the rank's Tn rows of
// `width` (its own tokens under sequence parallelism, before the latent is gathered).
void latent_norm(Emitter& em, const LayerDims& x, const std::string& name, double width,
                 Pass pass) {
  const double act = x.Tn * width * x.e;
  const double stats = x.Tn * kFp32;
  if (pass == Pass::forward)
    em.memory(name + ".fwd", 2 * act + stats);
  else
    em.memory(name + ".bwd", 3 * act + stats);
}

// Multi-head latent attention's projections (DeepSeek-V2 §2.1): every rank projects its tokens'
// latents with the whole down-projections (Megatron-Core duplicates them): all T tokens without
// sequence parallelism, its own Tn with it, whose latents are then gathered (TensorParallelism
// gathers b·s·latent instead of b·s·h). The heads this rank holds are rebuilt from the gathered
// latents, and rotary embedding touches only the rope dimensions (the key's shared by all
// heads). Backward runs them in reverse.
}  // namespace

void detail::latent_projections(Emitter& em, const TransformerKernelConfig& c, const LayerDims& x,
                                Pass pass) {
  const MlaSpec& m = *c.mla;
  const double q_rank = static_cast<double>(m.q_lora_rank);
  const double kv_rank = static_cast<double>(m.kv_lora_rank);
  const double rope = static_cast<double>(m.qk_rope_head_dim);
  const double kv_up = x.a_local * (static_cast<double>(m.qk_nope_head_dim) + x.dv);
  const double tables = 2 * x.s * rope * kFp32;
  const double roped = (x.T * x.a_local * rope + x.T * rope) * x.e;
  auto q_path = [&] {
    if (m.q_lora_rank == 0) {
      linear(em, "attn.q", pass, x.T, x.q_local_width, x.h, false, x.e);
      return;
    }
    if (pass == Pass::forward) {
      linear(em, "attn.q_down", pass, x.Tn, q_rank, x.h, false, x.e);
      latent_norm(em, x, "attn.q_norm", q_rank, pass);
      linear(em, "attn.q_up", pass, x.T, x.q_local_width, q_rank, false, x.e);
    } else {
      linear(em, "attn.q_up", pass, x.T, x.q_local_width, q_rank, false, x.e);
      latent_norm(em, x, "attn.q_norm", q_rank, pass);
      linear(em, "attn.q_down", pass, x.Tn, q_rank, x.h, false, x.e);
    }
  };
  auto kv_path = [&] {
    if (pass == Pass::forward) {
      linear(em, "attn.kv_down", pass, x.Tn, kv_rank + rope, x.h, false, x.e);
      latent_norm(em, x, "attn.kv_norm", kv_rank, pass);
      linear(em, "attn.kv_up", pass, x.T, kv_up, kv_rank, false, x.e);
    } else {
      linear(em, "attn.kv_up", pass, x.T, kv_up, kv_rank, false, x.e);
      latent_norm(em, x, "attn.kv_norm", kv_rank, pass);
      linear(em, "attn.kv_down", pass, x.Tn, kv_rank + rope, x.h, false, x.e);
    }
  };
  if (pass == Pass::forward) {
    q_path();
    kv_path();
    em.memory("attn.rope", 2 * roped + tables);
  } else {
    em.memory("attn.rope.bwd", 2 * roped + tables);
    kv_path();
    q_path();
  }
}

}  // namespace clustersim::models::kernels
