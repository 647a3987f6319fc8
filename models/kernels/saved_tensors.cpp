#include "models/kernels/saved_tensors.hpp"

#include <algorithm>
#include <stdexcept>

#include "models/kernels/element_bytes.hpp"

namespace clustersim::models::kernels {
namespace {

// The residual stream's element: fp32 under autocast (the fp32 embedding output plus 16-bit
// sublayer outputs promotes to fp32), else the training dtype.
double residual_bytes(const TransformerKernelConfig& c, const LayerDims& x) {
  return c.autocast ? kFp32 : x.e;
}

class Saver {
 public:
  // Saved for the backward.
  void saved(std::string name, double bytes, bool op_output = false) {
    out_.tensors.push_back({std::move(name), bytes, true, false, op_output});
  }
  void core(std::string name, double bytes, bool op_output = false) {
    out_.tensors.push_back({std::move(name), bytes, true, true, op_output});
  }
  // A GEMM's output the backward does not need (an op-level policy keeps it anyway).
  void op_output(std::string name, double bytes) {
    out_.tensors.push_back({std::move(name), bytes, false, false, true});
  }
  LayerSavedTensors& out() { return out_; }

 private:
  LayerSavedTensors out_;
};

// A norm keeps its input (the fused kernels and torch's layer_norm recompute the rest from it).
// Eager RMSNorm as PyTorch model code writes it (x.float(), x · rsqrt(mean(x²) + ε), .to(dtype),
// · weight) keeps the fp32 copy of its input (for pow and for the product with 1/σ) instead of
// the input, and the 16-bit normalized x for the weight's gradient.
void norm(Saver& sv, const TransformerKernelConfig& c, const LayerDims& x,
          const std::string& name) {
  if (fused(c, KernelFamily::norm) || c.norm == Norm::layernorm) {
    sv.saved(name + ".input", x.Tn * x.h * residual_bytes(c, x));
    return;
  }
  sv.saved(name + ".input.fp32", x.Tn * x.h * kFp32);
  sv.saved(name + ".normalized", x.Tn * x.h * x.e);
}

// fc1's output through the activation into fc2, for `tokens` tokens of width f on this rank.
// GeLU keeps its input and fc2 its output (Korthikanti's 8sh + 8sh at f = 4h); fused SwiGLU
// keeps the gate-and-up output [tokens × 2f]; eager silu(gate) · up keeps gate, up and silu's
// output.
void activation(Saver& sv, const TransformerKernelConfig& c, const LayerDims& x,
                const std::string& name, double tokens, double f) {
  if (c.activation == Activation::gelu) {
    sv.saved(name + ".fc1.out", tokens * f * x.e, true);
  } else {
    sv.saved(name + ".fc1.out", tokens * 2 * f * x.e, true);  // gate and up
    if (!fused(c, KernelFamily::activation)) sv.saved(name + ".silu.out", tokens * f * x.e);
  }
  sv.saved(name + ".fc2.input", tokens * f * x.e);
}

double mlp_backward_transient(const TransformerKernelConfig& c, const LayerDims& x, double tokens,
                              double f) {
  const double fc1_out = c.activation == Activation::swiglu ? 2 * f : f;
  return tokens * (fc1_out + f) * x.e;  // the gradients of fc1's output and of fc2's input
}

void dropout_mask(Saver& sv, const TransformerKernelConfig& c, const LayerDims& x,
                  const std::string& name) {
  if (c.dropout) sv.saved(name + ".dropout.mask", x.Tn * x.h * kMaskByte);
}

}  // namespace

LayerSavedTensors embedding_saved(const TransformerKernelConfig& c) {
  const LayerDims x = layer_dims(c);
  Saver sv;
  dropout_mask(sv, c, x, "embedding");
  return std::move(sv.out());
}

LayerSavedTensors attention_block_saved(const TransformerKernelConfig& c) {
  const LayerDims x = layer_dims(c);
  Saver sv;
  sv.out().block_input = x.Tn * x.h * residual_bytes(c, x);
  norm(sv, c, x, "attn.norm");
  sv.saved("attn.qkv.input", x.Tn * x.h * x.e);
  if (c.mla) {
    // Latent attention also keeps the latents: each norm's input and the up-projection's input
    // (the norm's output), for the query latent (when there is one) and the key/value latent.
    for (const auto& [name, width] : {std::pair{"attn.q_latent", c.mla->q_lora_rank},
                                      std::pair{"attn.kv_latent", c.mla->kv_lora_rank}})
      if (width > 0) {
        sv.saved(std::string(name) + ".norm_input", x.T * static_cast<double>(width) * x.e);
        sv.saved(std::string(name) + ".up_input", x.T * static_cast<double>(width) * x.e);
      }
  }
  sv.op_output("attn.qkv.out", x.T * (x.q_local_width + 2 * x.kv_local_width) * x.e);
  const double B = x.b * x.a_local;  // (sequence, head) problems on this rank
  if (flash_attention(c)) {
    // FlashAttention saves q, k, v (expanded to every query head when eager code expands them),
    // its output (below) and the fp32 log-sum-exp per query row and head.
    const double kv = attention_kv_width(c, x);
    sv.saved("attn.q", x.T * x.q_local_width * x.e);
    sv.saved("attn.k", x.T * kv * x.e);
    sv.saved("attn.v", x.T * kv * x.e);
    sv.core("attn.flash.lse", B * x.s * kFp32, true);
    // Backward: dq, dk, dv and the fp32 dq accumulator.
    sv.out().transient_backward =
        x.T * (x.q_local_width + 2 * kv) * x.e + x.T * x.q_local_width * kFp32;
  } else {
    // Q·Kᵀ saves q and k, scores·V the probabilities and v; with GQA the k and v the matmuls see
    // are expanded to every local head (repeat_kv).
    const bool gqa = x.kv_local_width < x.q_local_width;
    const double kv = gqa ? x.q_local_width : x.kv_local_width;
    const double scores = B * x.s * x.s * x.e;
    sv.saved("attn.q", x.T * x.q_local_width * x.e);
    sv.saved("attn.k", x.T * kv * x.e);
    sv.op_output("attn.scores", scores);
    // Autocast runs softmax in fp32 and saves its fp32 output; the probabilities' matmul with v
    // saves its own 16-bit cast (the dropout output below).
    sv.core("attn.softmax.out", c.autocast ? B * x.s * x.s * kFp32 : scores);
    if (c.dropout) {
      sv.core("attn.dropout.mask", B * x.s * x.s * kMaskByte);
      sv.core("attn.dropout.out", scores);
    } else if (c.autocast) {
      sv.core("attn.probs.cast", scores);
    }
    sv.saved("attn.v", x.T * kv * x.e);
    // The raw scores live while the softmax runs (two more with eager scale and mask); the
    // backward holds the probabilities' and the scores' gradients.
    sv.out().transient_forward = scores * (fused(c, KernelFamily::softmax) ? 1 : 2);
    sv.out().transient_backward = 2 * scores;
  }
  // The core's output: the projection's saved input. Eager code's projection keeps a transposed
  // copy of it, and the kernel keeps its own output for its backward.
  const double core_out = x.T * x.o_local_width * x.e;
  if (attention_output_copied(c)) {
    sv.saved("attn.sdpa.out", core_out, true);
    sv.saved("attn.proj.input", core_out);
  } else {
    sv.saved("attn.proj.input", core_out, true);
  }
  sv.op_output("attn.proj.out", x.T * x.h * x.e);
  dropout_mask(sv, c, x, "attn");
  return std::move(sv.out());
}

LayerSavedTensors mlp_block_saved(const TransformerKernelConfig& c) {
  const LayerDims x = layer_dims(c);
  Saver sv;
  norm(sv, c, x, "mlp.norm");
  if (c.num_experts <= 0) {
    const double f = static_cast<double>(c.ffn) / x.t;
    sv.saved("mlp.fc1.input", x.Tn * x.h * x.e);
    activation(sv, c, x, "mlp", x.T, f);
    sv.op_output("mlp.fc2.out", x.T * x.h * x.e);
    dropout_mask(sv, c, x, "mlp");
    sv.out().transient_backward = mlp_backward_transient(c, x, x.T, f);
    return std::move(sv.out());
  }
  // MoE: the router's input and fp32 probabilities, then each local expert's tokens (capacity and
  // imbalance included, as the kernels have them) through its MLP; unpermute keeps the experts'
  // outputs for the probabilities' gradient.
  const double E = c.num_experts;
  const double local = c.local_experts > 0 ? c.local_experts : c.num_experts;
  const double per_expert =
      c.tokens_per_expert > 0 ? c.tokens_per_expert : x.Tn * std::max(1, c.top_k) / E;
  const double routed = per_expert * local;
  const double f = static_cast<double>(c.expert_ffn) / x.t;
  sv.saved("moe.router.input", x.Tn * x.h * x.e);
  sv.op_output("moe.router.logits", x.Tn * E * x.e);
  sv.saved("moe.router.probs", x.Tn * E * kFp32);
  sv.saved("moe.experts.fc1.input", routed * x.h * x.e);
  activation(sv, c, x, "moe.experts", routed, f);
  sv.saved("moe.experts.fc2.out", routed * x.h * x.e, true);
  double transient = mlp_backward_transient(c, x, routed, f);
  if (c.shared_experts > 0) {
    const double fs = c.shared_experts * f;
    activation(sv, c, x, "moe.shared", x.Tn, fs);
    sv.op_output("moe.shared.fc2.out", x.Tn * x.h * x.e);
    transient = std::max(transient, mlp_backward_transient(c, x, x.Tn, fs));
  }
  dropout_mask(sv, c, x, "mlp");
  sv.out().transient_backward = transient;
  return std::move(sv.out());
}

LayerSavedTensors lm_head_saved(const TransformerKernelConfig& c) {
  const LayerDims x = layer_dims(c);
  if (c.vocab <= 0) throw std::invalid_argument("saved tensors: vocab must be >= 1");
  Saver sv;
  const double logits = x.T * static_cast<double>(c.vocab) / x.t;  // elements on this rank
  norm(sv, c, x, "lm_head.norm");
  sv.saved("lm_head.logits.input", x.Tn * x.h * x.e);
  if (c.loss_chunks > 1) {
    // The compiled chunked loss keeps the 16-bit logits (and a log-sum-exp per token) and
    // recomputes the softmax from them; the backward holds one chunk's logit gradient at a time.
    sv.saved("lm_head.logits.out", logits * x.e, true);
    sv.out().transient_backward = logits / c.loss_chunks * x.e;
    return std::move(sv.out());
  }
  sv.op_output("lm_head.logits.out", logits * x.e);
  // The cross-entropy keeps its fp32 softmax (Megatron's vocab-parallel kernel; torch's
  // log_softmax of logits.float() alike).
  sv.saved("lm_head.ce.softmax", logits * kFp32);
  // Forward: the 16-bit logits live while the loss runs (and eager's fp32 copy); backward: the
  // logits' fp32 and 16-bit gradients.
  sv.out().transient_forward = logits * (x.e + (fused(c, KernelFamily::cross_entropy) ? 0 : kFp32));
  sv.out().transient_backward = logits * (kFp32 + x.e);
  return std::move(sv.out());
}

double saved_bytes(const LayerSavedTensors& layer) {
  double sum = 0;
  for (const auto& t : layer.tensors)
    if (t.saved) sum += t.bytes;
  return sum;
}

double kept_bytes(const LayerSavedTensors& layer, RecomputePolicy policy, bool recomputable) {
  if (!recomputable) policy = RecomputePolicy::none;
  double sum = 0;
  switch (policy) {
    case RecomputePolicy::none:
      return saved_bytes(layer);
    case RecomputePolicy::selective:
      for (const auto& t : layer.tensors)
        if (t.saved && !t.attention_core) sum += t.bytes;
      return sum;
    case RecomputePolicy::full:
      return layer.block_input;
    case RecomputePolicy::selective_op:
      for (const auto& t : layer.tensors)
        if (t.op_output) sum += t.bytes;
      return layer.block_input + sum;
  }
  return sum;
}

double recomputed_bytes(const LayerSavedTensors& layer, RecomputePolicy policy, bool recomputable) {
  if (!recomputable) return 0;
  double sum = 0;
  switch (policy) {
    case RecomputePolicy::none:
      return 0;
    case RecomputePolicy::selective:
      for (const auto& t : layer.tensors)
        if (t.saved && t.attention_core) sum += t.bytes;
      return sum;
    case RecomputePolicy::full:
      return std::max(0.0, saved_bytes(layer) - layer.block_input);
    case RecomputePolicy::selective_op:
      for (const auto& t : layer.tensors)
        if (t.saved && !t.op_output) sum += t.bytes;
      return std::max(0.0, sum - layer.block_input);
  }
  return sum;
}

}  // namespace clustersim::models::kernels
