#include "models/kernels/transformer_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "models/kernels/element_bytes.hpp"
#include "models/kernels/kernel_emitter.hpp"
#include "models/kernels/transformer_parts.hpp"

namespace clustersim::models::kernels {
namespace {

using detail::core_attention;
using detail::Emitter;
using detail::latent_projections;
using detail::linear;
using engine::Kernel;
using engine::KernelKind;

// multi_tensor_apply (apex's and PyTorch's MultiTensorApply.cuh, depth_to_max_tensors): tensors
// per launch at depth 4 (Adam: grad, param, m, v), 3 and 2.
constexpr std::uint64_t kTensorsPerLaunchDepth4 = 36;
constexpr std::uint64_t kTensorsPerLaunchDepth3 = 48;
constexpr std::uint64_t kTensorsPerLaunchDepth2 = 64;

// The emitter of a transformer's lists, with the config's gradient accumulation.
Emitter emitter(engine::KernelTable& names, const TransformerKernelConfig& c) {
  Emitter em(names, c.dtype);
  if (!c.gradient_accumulation_fusion)
    em.accumulate_grads_separately(c.main_grad_bytes, c.cast_main_grad);
  return em;
}

}  // namespace

LayerDims layer_dims(const TransformerKernelConfig& c) {
  if (c.hidden <= 0 || c.heads <= 0 || c.seq <= 0 || c.micro_batch <= 0 || c.tp <= 0)
    throw std::invalid_argument(
        "transformer kernels: hidden, heads, seq, micro_batch and tp must be >= 1");
  const int kv_heads = c.kv_heads > 0 ? c.kv_heads : c.heads;
  if (c.heads % c.tp != 0 || (kv_heads % c.tp != 0 && c.tp % kv_heads != 0))
    throw std::invalid_argument("transformer kernels: tp must divide the attention heads");
  LayerDims x{};
  x.t = c.tp;
  x.b = static_cast<double>(c.micro_batch);
  x.s = static_cast<double>(c.seq);
  x.T = x.b * x.s;
  x.Tn = c.sequence_parallel ? x.T / x.t : x.T;
  x.h = static_cast<double>(c.hidden);
  x.d = x.h / c.heads;
  x.a_local = static_cast<double>(c.heads) / x.t;
  x.q_local_width = x.h / x.t;
  // GQA: kv heads shard by t (replicated when fewer kv heads than TP ranks, as Megatron does).
  x.kv_local_width = std::max(1.0, static_cast<double>(kv_heads) / x.t) * x.d;
  x.dv = x.d;
  if (c.mla) {
    x.d = static_cast<double>(c.mla->qk_head_dim());
    x.dv = static_cast<double>(c.mla->v_head_dim);
    x.q_local_width = x.a_local * x.d;
    x.kv_local_width = x.a_local * (x.d + x.dv) / 2;  // every head has its own k and v
  }
  x.o_local_width = x.a_local * x.dv;
  x.f = static_cast<double>(c.ffn);
  x.e = bytes_per_element(c.dtype == Precision::fp8 ? Precision::bf16 : c.dtype);
  return x;
}

// A linear layer's kernels: forward GEMM, or backward dgrad + wgrad (+ bias grad reduction).
void detail::linear(Emitter& em, const std::string& name, Pass pass, double T, double n, double k,
                    bool bias, double e, bool dgrad) {
  // fp8 GEMMs read fp8 copies: each input is cast (and its amax taken) by a kernel of its own,
  // reading bf16 (2 B) and writing fp8 (1 B) per element (Transformer Engine's cast_to_fp8).
  if (em.fp8())
    em.memory(name + (pass == Pass::forward ? ".cast_input" : ".cast_grad"),
              3 * T * (pass == Pass::forward ? k : n));
  if (pass == Pass::forward) {
    em.gemm(name + ".fprop", T, n, k, 1, false, true, e);  // bias fused in the GEMM epilogue
    return;
  }
  if (dgrad) em.gemm(name + ".dgrad", T, k, n, 1, false, false, e);
  em.gemm(name + ".wgrad", n, k, T, 1, true, false, e);
  em.wgrad_accumulate(name + ".wgrad_accumulate", n * k, e);
  if (bias) em.memory(name + ".bgrad", T * n * e + n * kFp32);
}

namespace {

void norm(Emitter& em, const TransformerKernelConfig& c, const LayerDims& x,
          const std::string& name, Pass pass) {
  const double act = x.Tn * x.h * x.e;
  const double stats = x.Tn * 2 * kFp32;
  // torch's layer_norm is one kernel too
  const bool one_kernel = fused(c, KernelFamily::norm) || c.norm == Norm::layernorm;
  // Eager RMSNorm computes in fp32 (x.float(), x · rsqrt(mean(x²) + ε), .to(dtype), · weight):
  // the cast and the middle kernels move fp32 elements; a 16-bit input costs a cast each way.
  const double act32 = x.Tn * x.h * kFp32;
  const bool casts = x.e < kFp32;
  if (pass == Pass::forward) {
    if (one_kernel) {
      em.memory(name + ".fwd", 2 * act + stats);
    } else {
      if (casts) em.memory(name + ".to_fp32", act + act32);
      em.memory(name + ".pow", 2 * act32);
      em.memory(name + ".mean", act32 + x.Tn * kFp32);
      em.memory(name + ".rsqrt", 2 * x.Tn * kFp32);
      em.memory(name + ".mul_rstd", 2 * act32 + x.Tn * kFp32);
      if (casts) em.memory(name + ".to_dtype", act32 + act);
      em.memory(name + ".mul_weight", 2 * act + x.h * x.e);
    }
    return;
  }
  if (one_kernel) {  // dx from x, dy, stats; then the weight/bias gradient partials reduced
    em.memory(name + ".bwd", 3 * act + stats);
    em.memory(name + ".wgrad_reduce", 2 * x.h * kFp32 * 64);
  } else {
    em.memory(name + ".mul_weight.bwd", 3 * act);
    em.memory(name + ".weight_grad", 2 * act + x.h * kFp32);
    if (casts) em.memory(name + ".to_dtype.bwd", act + act32);
    em.memory(name + ".mul_rstd.bwd", 3 * act32 + x.Tn * kFp32);
    em.memory(name + ".mean.bwd", act32 + x.Tn * kFp32);
    em.memory(name + ".pow.bwd", 3 * act32);
    if (casts) em.memory(name + ".to_fp32.bwd", act32 + act);
  }
}

// Bias + dropout + residual add after a row-parallel layer (Megatron's bias_dropout_add).
void bias_dropout_add(Emitter& em, const TransformerKernelConfig& c, const LayerDims& x,
                      const std::string& name, Pass pass) {
  const double act = x.Tn * x.h * x.e;
  const double mask = c.dropout ? x.Tn * x.h * kMaskByte : 0;
  if (pass == Pass::forward) {
    if (fused(c, KernelFamily::bias_dropout_add) || (!c.bias && !c.dropout)) {
      em.memory(name + ".bias_dropout_add", 3 * act + mask + (c.bias ? x.h * x.e : 0));
    } else {
      if (c.bias) em.memory(name + ".bias_add", 2 * act + x.h * x.e);
      if (c.dropout) em.memory(name + ".dropout", 2 * act + mask);
      em.memory(name + ".residual_add", 3 * act);
    }
    return;
  }
  // The residual passes dy through; the branch gets dropout's backward; the bias gradient is a
  // reduction over tokens.
  if (c.dropout) em.memory(name + ".dropout.bwd", 2 * act + mask);
  if (c.bias) em.memory(name + ".bias.bgrad", act + x.h * kFp32);
}

void residual_grad_add(Emitter& em, const LayerDims& x, const std::string& name) {
  em.memory(name + ".residual_grad_add", 3 * x.Tn * x.h * x.e);
}

void rotary(Emitter& em, const TransformerKernelConfig& c, const LayerDims& x, Pass pass) {
  const std::string tag = pass == Pass::forward ? "" : ".bwd";
  const double q = x.T * x.q_local_width * x.e;
  const double k = x.T * x.kv_local_width * x.e;
  const double tables = 2 * x.s * x.d * kFp32;  // cos and sin
  if (fused(c, KernelFamily::rope)) {
    em.memory("attn.rope" + tag, 2 * (q + k) + tables);
    return;
  }
  // eager: x·cos, rotate_half (neg + cat), ·sin, add, for q and for k
  for (const auto& [which, bytes] : {std::pair{"q", q}, std::pair{"k", k}}) {
    const std::string base = std::string("attn.rope_") + which;
    em.memory(base + ".mul_cos" + tag, 2 * bytes + tables / 2);
    em.memory(base + ".rotate_half" + tag, 2 * bytes);
    em.memory(base + ".mul_sin" + tag, 2 * bytes + tables / 2);
    em.memory(base + ".add" + tag, 3 * bytes);
  }
}

void activation(Emitter& em, const TransformerKernelConfig& c, const std::string& name, double T,
                double f, double e, Pass pass) {
  const double out = T * f * e;
  if (c.activation == Activation::gelu) {
    if (pass == Pass::forward) {
      if (fused(c, KernelFamily::activation) || !c.bias) {
        em.memory(name + ".bias_gelu", 2 * out + (c.bias ? f * e : 0));
      } else {
        em.memory(name + ".bias_add", 2 * out + f * e);
        em.memory(name + ".gelu", 2 * out);
      }
    } else {
      em.memory(name + ".bias_gelu.bwd", 3 * out);
    }
    return;
  }
  // SwiGLU over the fused gate+up output [T × 2f]: silu(gate) · up.
  if (pass == Pass::forward) {
    if (fused(c, KernelFamily::activation)) {
      em.memory(name + ".swiglu", 3 * out);
    } else {
      em.memory(name + ".silu", 2 * out);
      em.memory(name + ".mul", 3 * out);
    }
  } else {
    if (fused(c, KernelFamily::activation)) {
      em.memory(name + ".swiglu.bwd", 5 * out);
    } else {
      em.memory(name + ".mul.bwd_up", 3 * out);
      em.memory(name + ".mul.bwd_gate", 3 * out);
      em.memory(name + ".silu.bwd", 3 * out);
      em.memory(name + ".cat", 4 * out);
    }
  }
}

void dense_mlp(Emitter& em, const TransformerKernelConfig& c, const LayerDims& x,
               const std::string& name, double f_local, Pass pass) {
  const double fc1_out = c.activation == Activation::swiglu ? 2 * f_local : f_local;
  if (pass == Pass::forward) {
    linear(em, name + ".fc1", pass, x.T, fc1_out, x.h, c.bias, x.e);
    activation(em, c, name, x.T, f_local, x.e, pass);
    linear(em, name + ".fc2", pass, x.T, x.h, f_local, false, x.e);
  } else {
    linear(em, name + ".fc2", pass, x.T, x.h, f_local, false, x.e);
    activation(em, c, name, x.T, f_local, x.e, pass);
    linear(em, name + ".fc1", pass, x.T, fc1_out, x.h, c.bias, x.e);
  }
}

// The MoE block in the three ops the expert-parallel plan runs (MoePart): the router's op
// (norm, router GEMM, softmax, top-k, permute), the experts' (grouped expert GEMMs, activation,
// unpermute) and the shared experts' (a dense MLP); the residual bias-dropout-add goes with the
// last op of the forward (the shared experts', else the experts'), its backward with the first
// op of the backward.
void moe_part(Emitter& em, const TransformerKernelConfig& c, const LayerDims& x, Pass pass,
              MoePart part) {
  if (c.top_k <= 0 || c.expert_ffn <= 0)
    throw std::invalid_argument("MoE kernels: top_k and expert_ffn must be >= 1");
  const double E = c.num_experts;
  const double local = c.local_experts > 0 ? c.local_experts : c.num_experts;
  const double k = c.top_k;
  const double tokens = c.tokens_per_expert > 0 ? c.tokens_per_expert : x.Tn * k / E;
  const double f_local = static_cast<double>(c.expert_ffn) / x.t;
  const double fc1_out = c.activation == Activation::swiglu ? 2 * f_local : f_local;
  const double routed = x.Tn * k * x.h * x.e;  // token copies after dispatch
  const double probs = x.Tn * E * kFp32;
  const double f_shared = static_cast<double>(c.shared_experts) * f_local;
  const bool shared = c.shared_experts > 0;
  LayerDims sx = x;
  sx.T = x.Tn;
  const bool fwd = pass == Pass::forward;
  switch (part) {
    case MoePart::router:
      if (fwd) {
        norm(em, c, x, "mlp.norm", pass);
        linear(em, "moe.router", pass, x.Tn, E, x.h, false, x.e);
        em.memory("moe.router.softmax", 2 * probs);
        em.memory("moe.router.topk", probs + x.Tn * k * (kFp32 + kIndex));
        em.memory("moe.permute", x.Tn * x.h * x.e + routed + x.Tn * k * kIndex);
      } else {
        em.memory("moe.permute.bwd", x.Tn * x.h * x.e + routed + x.Tn * k * kIndex);
        em.memory("moe.router.topk.bwd", probs + x.Tn * k * kFp32);
        em.memory("moe.router.softmax.bwd", 3 * probs);
        linear(em, "moe.router", pass, x.Tn, E, x.h, false, x.e);
        norm(em, c, x, "mlp.norm", pass);
        residual_grad_add(em, x, "mlp");
      }
      return;
    case MoePart::experts:
      if (fwd) {
        em.gemm("moe.experts.fc1.fprop", tokens, fc1_out, x.h, local, false, true, x.e);
        activation(em, c, "moe.experts", tokens * local, f_local, x.e, pass);
        em.gemm("moe.experts.fc2.fprop", tokens, x.h, f_local, local, false, true, x.e);
        em.memory("moe.unpermute", routed + x.Tn * x.h * x.e + x.Tn * k * kFp32);
        if (!shared) bias_dropout_add(em, c, x, "mlp", pass);
      } else {
        if (!shared) bias_dropout_add(em, c, x, "mlp", pass);
        em.memory("moe.unpermute.bwd", routed + x.Tn * x.h * x.e + x.Tn * k * kFp32);
        em.gemm("moe.experts.fc2.dgrad", tokens, f_local, x.h, local, false, false, x.e);
        em.gemm("moe.experts.fc2.wgrad", x.h, f_local, tokens, local, true, false, x.e);
        em.wgrad_accumulate("moe.experts.fc2.wgrad_accumulate", x.h * f_local * local, x.e);
        activation(em, c, "moe.experts", tokens * local, f_local, x.e, pass);
        em.gemm("moe.experts.fc1.dgrad", tokens, x.h, fc1_out, local, false, false, x.e);
        em.gemm("moe.experts.fc1.wgrad", fc1_out, x.h, tokens, local, true, false, x.e);
        em.wgrad_accumulate("moe.experts.fc1.wgrad_accumulate", fc1_out * x.h * local, x.e);
      }
      return;
    case MoePart::shared:
      if (!shared) return;
      if (fwd) {
        dense_mlp(em, c, sx, "moe.shared", f_shared, pass);
        bias_dropout_add(em, c, x, "mlp", pass);
      } else {
        bias_dropout_add(em, c, x, "mlp", pass);
        dense_mlp(em, c, sx, "moe.shared", f_shared, pass);
      }
      return;
  }
}

}  // namespace

TransformerKernelConfig kernel_config(const TransformerSpec& m, long micro_batch, long seq,
                                      int tp) {
  TransformerKernelConfig c;
  c.micro_batch = micro_batch;
  c.seq = seq;
  c.hidden = m.hidden_size;
  c.heads = m.num_heads;
  c.kv_heads = m.num_kv_heads;
  c.ffn = m.ffn_hidden_size;
  c.vocab = m.vocab_size;
  c.activation = m.activation;
  c.norm = m.norm;
  c.bias = m.bias;
  c.learned_positions = m.learned_positions;
  c.dropout = m.bias;  // GPT/BERT-style models train with dropout, Llama-style ones without
  c.tp = tp;
  if (m.moe) {
    c.num_experts = m.moe->num_experts;
    c.top_k = m.moe->top_k;
    c.expert_ffn =
        m.moe->expert_ffn_hidden_size > 0 ? m.moe->expert_ffn_hidden_size : m.ffn_hidden_size;
    c.shared_experts = m.moe->shared_experts;
  }
  c.mla = m.mla;
  return c;
}

std::vector<Kernel> attention_block_kernels(const TransformerKernelConfig& c, Pass pass,
                                            engine::KernelTable& names) {
  const LayerDims x = layer_dims(c);
  Emitter em = emitter(names, c);
  const double qkv = x.q_local_width + 2 * x.kv_local_width;
  auto projections = [&] {
    if (c.mla) {
      latent_projections(em, c, x, pass);
      return;
    }
    linear(em, "attn.qkv", pass, x.T, qkv, x.h, c.bias, x.e);
    if (!c.learned_positions) rotary(em, c, x, pass);
  };
  if (pass == Pass::forward) {
    norm(em, c, x, "attn.norm", pass);
    projections();
    core_attention(em, c, x, pass);
    linear(em, "attn.proj", pass, x.T, x.h, x.o_local_width, false, x.e);
    bias_dropout_add(em, c, x, "attn", pass);
  } else {
    bias_dropout_add(em, c, x, "attn", pass);
    linear(em, "attn.proj", pass, x.T, x.h, x.o_local_width, false, x.e);
    core_attention(em, c, x, pass);
    projections();
    norm(em, c, x, "attn.norm", pass);
    residual_grad_add(em, x, "attn");
  }
  return em.take();
}

std::vector<Kernel> mlp_block_kernels(const TransformerKernelConfig& c, Pass pass,
                                      engine::KernelTable& names) {
  const LayerDims x = layer_dims(c);
  Emitter em = emitter(names, c);
  if (c.num_experts > 0) {  // the three ops of the expert-parallel plan, back to back
    constexpr MoePart forward_order[] = {MoePart::router, MoePart::experts, MoePart::shared};
    constexpr MoePart backward_order[] = {MoePart::shared, MoePart::experts, MoePart::router};
    for (MoePart part : pass == Pass::forward ? forward_order : backward_order)
      moe_part(em, c, x, pass, part);
    return em.take();
  }
  if (c.ffn <= 0) throw std::invalid_argument("transformer kernels: ffn must be >= 1");
  if (pass == Pass::forward) {
    norm(em, c, x, "mlp.norm", pass);
    dense_mlp(em, c, x, "mlp", x.f / x.t, pass);
    bias_dropout_add(em, c, x, "mlp", pass);
  } else {
    bias_dropout_add(em, c, x, "mlp", pass);
    dense_mlp(em, c, x, "mlp", x.f / x.t, pass);
    norm(em, c, x, "mlp.norm", pass);
    residual_grad_add(em, x, "mlp");
  }
  return em.take();
}

std::vector<Kernel> moe_kernels(const TransformerKernelConfig& c, Pass pass, MoePart part,
                                engine::KernelTable& names) {
  if (c.num_experts <= 0) throw std::invalid_argument("MoE kernels: num_experts must be >= 1");
  const LayerDims x = layer_dims(c);
  Emitter em = emitter(names, c);
  moe_part(em, c, x, pass, part);
  return em.take();
}

std::vector<Kernel> transformer_layer_kernels(const TransformerKernelConfig& c, Pass pass,
                                              engine::KernelTable& names) {
  auto first = attention_block_kernels(c, pass, names);
  auto second = mlp_block_kernels(c, pass, names);
  if (pass == Pass::backward) std::swap(first, second);  // backward runs the MLP first
  first.insert(first.end(), second.begin(), second.end());
  return first;
}

std::vector<Kernel> embedding_kernels(const TransformerKernelConfig& c, Pass pass,
                                      engine::KernelTable& names) {
  const LayerDims x = layer_dims(c);
  if (c.vocab <= 0) throw std::invalid_argument("transformer kernels: vocab must be >= 1");
  Emitter em = emitter(names, c);
  const double act = x.T * x.h * x.e;
  const double shard = static_cast<double>(c.vocab) / x.t * x.h;
  if (pass == Pass::forward) {
    if (c.tp > 1) em.memory("embedding.mask_ids", 3 * x.T * kIndex);
    em.memory("embedding.gather", 2 * act + x.T * kIndex);
    if (c.tp > 1) em.memory("embedding.zero_masked", 2 * act + x.T);
    if (c.learned_positions) em.memory("embedding.position_add", 3 * act);
    if (c.dropout) em.memory("embedding.dropout", 2 * x.Tn * x.h * x.e + x.Tn * x.h * kMaskByte);
  } else {
    if (c.dropout) em.memory("embedding.dropout.bwd", 2 * x.Tn * x.h * x.e + x.Tn * x.h);
    if (c.learned_positions) em.memory("embedding.position.bwd", act + x.T * x.h * kFp32);
    em.memory("embedding.zero_grad_table", shard * kFp32);
    em.memory("embedding.sort_ids", 4 * x.T * kIndex);
    em.memory("embedding.scatter_add", act + 2 * x.T * x.h * kFp32 + x.T * kIndex);
  }
  return em.take();
}

std::vector<Kernel> lm_head_kernels(const TransformerKernelConfig& c, Pass pass,
                                    engine::KernelTable& names) {
  const LayerDims x = layer_dims(c);
  if (c.vocab <= 0) throw std::invalid_argument("transformer kernels: vocab must be >= 1");
  // Under fp8 training the output layer stays bf16: Megatron-Core enters Transformer Engine's
  // fp8 context per transformer layer and the output layer is its own ColumnParallelLinear
  // outside them; torchtitan's float8 conversion leaves `output` out likewise.
  TransformerKernelConfig head = c;
  if (head.dtype == Precision::fp8) head.dtype = Precision::bf16;
  Emitter em = emitter(names, head);
  const double v = static_cast<double>(c.vocab) / x.t;
  const double logits = x.T * v;  // elements
  if (c.loss_chunks > 1) {
    // Chunk by chunk: the projection's GEMMs, then one compiled kernel per chunk that reads the
    // 16-bit logits and writes the per-token log-sum-exp (forward) or the logits' 16-bit
    // gradient (backward); the fp32 upcast lives in registers.
    const double chunks = c.loss_chunks;
    const double rows = x.T / chunks;
    if (pass == Pass::forward) norm(em, c, x, "lm_head.norm", pass);
    for (int i = 0; i < c.loss_chunks; ++i) {
      if (pass == Pass::forward) {
        linear(em, "lm_head.logits", pass, rows, v, x.h, false, x.e);
        em.memory("lm_head.ce.chunk", logits / chunks * x.e + rows * 2 * kFp32);
      } else {
        em.memory("lm_head.ce.chunk.bwd", logits / chunks * 2 * x.e + rows * 2 * kFp32);
        linear(em, "lm_head.logits", pass, rows, v, x.h, false, x.e);
      }
    }
    if (pass == Pass::backward) norm(em, c, x, "lm_head.norm", pass);
    return em.take();
  }
  if (pass == Pass::forward) {
    norm(em, c, x, "lm_head.norm", pass);
    linear(em, "lm_head.logits", pass, x.T, v, x.h, false, x.e);
    if (fused(c, KernelFamily::cross_entropy)) {  // one pass: fp32 max/sum-exp and target logit;
                                                  // one writes softmax
      em.memory("lm_head.ce.fwd", logits * x.e + x.T * 3 * kFp32);
      em.memory("lm_head.ce.softmax", logits * (x.e + kFp32));
    } else {  // Megatron's vocab-parallel CE on logits.float()
      em.memory("lm_head.ce.cast", logits * (x.e + kFp32));
      em.memory("lm_head.ce.max", logits * kFp32);
      em.memory("lm_head.ce.sub_max", 2 * logits * kFp32);
      em.memory("lm_head.ce.target_logit", x.T * (kIndex + 2 * kFp32));
      em.memory("lm_head.ce.exp", 2 * logits * kFp32);
      em.memory("lm_head.ce.sum", logits * kFp32);
      em.memory("lm_head.ce.div", 2 * logits * kFp32);
    }
  } else {
    if (fused(c, KernelFamily::cross_entropy)) {
      em.memory("lm_head.ce.bwd", logits * (kFp32 + x.e));
    } else {
      em.memory("lm_head.ce.sub_onehot", 2 * logits * kFp32);
      em.memory("lm_head.ce.mul_grad", logits * (kFp32 + x.e));
    }
    linear(em, "lm_head.logits", pass, x.T, v, x.h, false, x.e);
    norm(em, c, x, "lm_head.norm", pass);
  }
  return em.take();
}

std::vector<Kernel> optimizer_kernels(const OptimizerKernelConfig& c, engine::KernelTable& names) {
  if (c.params < 0 || c.tensors == 0)
    throw std::invalid_argument("optimizer kernels: params must be >= 0, tensors >= 1");
  Emitter em(names, Precision::fp32);
  const double p = c.params;
  const std::uint64_t launches4 =
      (c.tensors + kTensorsPerLaunchDepth4 - 1) / kTensorsPerLaunchDepth4;
  const std::uint64_t launches3 =
      (c.tensors + kTensorsPerLaunchDepth3 - 1) / kTensorsPerLaunchDepth3;
  const std::uint64_t launches2 =
      (c.tensors + kTensorsPerLaunchDepth2 - 1) / kTensorsPerLaunchDepth2;
  auto pass = [&](const std::string& name, double bytes_per_param, std::uint64_t launches,
                  double flops_per_param) {
    for (std::uint64_t i = 0; i < launches; ++i)
      em.memory(name, bytes_per_param * p / static_cast<double>(launches),
                flops_per_param * p / static_cast<double>(launches));
  };
  if (c.clip_grad) {
    pass("optimizer.grad_norm", kFp32, launches2, 2);      // multi_tensor_l2norm: read grads
    pass("optimizer.grad_clip", 2 * kFp32, launches2, 1);  // multi_tensor_scale in place
  }
  // torch's foreach steps (torch/optim/adam.py, sgd.py, _multi_tensor_*): L2 decay first makes
  // a new gradient list, grads + wd * params; AdamW multiplies the parameters in place. A fused
  // step folds either into its one pass.
  if (!c.fused && c.l2_decay) pass("optimizer.foreach.weight_decay", 3 * kFp32, launches3, 2);
  if (c.optimizer == OptimizerKind::adam) {
    if (c.fused) {  // read grad, param, m, v; write param, m, v (fp32)
      pass("optimizer.adam", 7 * kFp32, launches4, 10);
    } else {  // torch foreach Adam: lerp m, mul v, addcmul v, sqrt, div, add eps, addcdiv param
      if (c.decoupled_decay) pass("optimizer.foreach.decay", 2 * kFp32, launches2, 1);
      pass("optimizer.foreach.lerp_m", 3 * kFp32, launches4, 2);
      pass("optimizer.foreach.mul_v", 2 * kFp32, launches2, 1);
      pass("optimizer.foreach.addcmul_v", 3 * kFp32, launches4, 2);
      pass("optimizer.foreach.sqrt", 2 * kFp32, launches2, 1);
      pass("optimizer.foreach.div", 2 * kFp32, launches2, 1);
      pass("optimizer.foreach.add_eps", 2 * kFp32, launches2, 1);
      pass("optimizer.foreach.addcdiv", 4 * kFp32, launches4, 3);
    }
  } else if (c.fused) {  // read grad, param (and buffer); write param (and buffer)
    pass("optimizer.sgd", (c.momentum ? 5 : 3) * kFp32, c.momentum ? launches4 : launches3,
         c.momentum ? 3 : 1);
  } else {  // torch foreach SGD: buffer *= momentum, buffer += grad, then param -= lr * buffer
    if (c.momentum) {
      pass("optimizer.foreach.mul_buf", 2 * kFp32, launches2, 1);
      pass("optimizer.foreach.add_buf", 3 * kFp32, launches3, 1);
    }
    pass("optimizer.foreach.sgd", 3 * kFp32, launches3, 1);
  }
  if (c.master_weights) pass("optimizer.cast_to_model", kFp32 + 2, launches2, 0);
  if (c.zero_grad) pass("optimizer.zero_grad", kFp32, 1, 0);
  return em.take();
}

double total_flops(const std::vector<Kernel>& kernels) {
  double sum = 0;
  for (const auto& k : kernels)
    sum += k.flops;
  return sum;
}

double gemm_flops(const std::vector<Kernel>& kernels) {
  double sum = 0;
  for (const auto& k : kernels)
    if (k.kind != KernelKind::memory && k.kind != KernelKind::launch_only &&
        k.kind != KernelKind::host_memory)
      sum += k.flops;
  return sum;
}

}  // namespace clustersim::models::kernels
