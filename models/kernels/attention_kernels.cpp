// The attention core's kernels (flash, FlashAttention 1, or standard attention's GEMMs and s²
// memory kernels), shared by the attention block's lists and selective recompute.
#include <algorithm>

#include "models/kernels/element_bytes.hpp"
#include "models/kernels/kernel_emitter.hpp"
#include "models/kernels/transformer_parts.hpp"

namespace clustersim::models::kernels {

using detail::Emitter;

bool flash_attention(const TransformerKernelConfig& c) {
  return c.attention == AttentionImpl::flash || c.attention == AttentionImpl::flash1;
}

bool fused(const TransformerKernelConfig& c, KernelFamily family) {
  return c.fused_kernels && (c.eager_families & family_bit(family)) == 0;
}

bool attention_from_eager_code(const TransformerKernelConfig& c) {
  return c.attention == AttentionImpl::flash && !c.fused_kernels && !c.mla;
}

bool attention_output_copied(const TransformerKernelConfig& c) {
  return attention_from_eager_code(c) ||
         (c.attention == AttentionImpl::flash1 && c.micro_batch > 1);
}

double attention_kv_width(const TransformerKernelConfig& c, const LayerDims& x) {
  return attention_from_eager_code(c) ? std::max(x.kv_local_width, x.q_local_width)
                                      : x.kv_local_width;
}

void detail::core_attention(Emitter& em, const TransformerKernelConfig& c, const LayerDims& x,
                            Pass pass) {
  const double B = x.b * x.a_local;  // independent (sequence, head) attention problems
  const double s = x.s;
  const double q = x.T * x.q_local_width * x.e;  // q and its gradient
  const double o = x.T * x.o_local_width * x.e;  // the output and its gradient
  const double kv = x.T * x.kv_local_width * x.e;
  const double expanded = x.T * x.q_local_width * x.e;  // k (or v) on every local query head
  if (flash_attention(c)) {
    // Under context parallelism the local queries meet every KV block: s·s_k products, half of
    // them masked when causal (the 2·cp-chunk split gives each rank an equal share), and every
    // block of K and V (and, in backward, of their gradients) is read and written once.
    const double s_k = c.kv_seq > 0 ? static_cast<double>(c.kv_seq) : s;
    const bool eager = attention_from_eager_code(c);
    const bool expand = attention_kv_width(c, x) > x.kv_local_width;
    // FlashAttention 1's varlen interface takes batch-major tokens: Megatron-LM's legacy
    // FlashSelfAttention copies q, k, v from [s, b, ...] to [b, s, ...] and the output back
    // (views, no copy, at micro-batch 1).
    const bool transposed = c.attention == AttentionImpl::flash1 && x.b > 1;
    const bool v1 = c.attention == AttentionImpl::flash1;
    const double kv_all = (expand ? expanded : kv) * s_k / s;
    // Q·Kᵀ over d and P·V over dv: 2·s·s_k·(d + dv) a head, 4·s·s_k·d when they are equal.
    const double fwd_flops = 2.0 * B * s * s_k * (x.d + x.dv) / (c.causal ? 2.0 : 1.0);
    const double lse = B * s * kFp32;
    if (pass == Pass::forward) {
      if (expand) em.memory("attn.repeat_kv", 2 * (kv + expanded));
      if (transposed) em.memory("attn.qkv.to_batch_major", 2 * (q + 2 * kv));
      em.attention(v1 ? "attn.flash1.fwd" : "attn.flash.fwd", true, s, s_k, x.d, B, c.causal,
                   fwd_flops, q + o + 2 * kv_all + lse, v1);
      if (eager) em.memory("attn.out.contiguous", 2 * o);
      if (transposed) em.memory("attn.out.to_seq_major", 2 * o);
    } else {  // FlashAttention-2: dot(o, do) preprocess, the backward, dq accumulator convert
      if (eager) em.memory("attn.out.contiguous.bwd", 2 * o);
      if (transposed) em.memory("attn.out.to_seq_major.bwd", 2 * o);
      em.memory("attn.flash.bwd_preprocess", 2 * o + lse);
      em.attention(v1 ? "attn.flash1.bwd" : "attn.flash.bwd", false, s, s_k, x.d, B, c.causal,
                   2.5 * fwd_flops, 2 * (q + o) + 4 * kv_all + lse + 2 * q / x.e * kFp32, v1);
      em.memory("attn.flash.bwd_convert_dq", q / x.e * kFp32 + q);
      if (transposed) em.memory("attn.qkv.to_batch_major.bwd", 2 * (q + 2 * kv));
      if (expand) em.memory("attn.repeat_kv.bwd", 2 * (kv + expanded));  // sum over the group
    }
    return;
  }
  // Standard attention: GQA expands k and v to all local heads first.
  const double scores = B * s * s * x.e;
  const double mask = c.dropout ? B * s * s * kMaskByte : 0;
  const bool gqa = x.kv_local_width < x.q_local_width;
  if (pass == Pass::forward) {
    if (gqa) em.memory("attn.repeat_kv", 2 * (kv + expanded));
    em.gemm("attn.qk.fprop", s, s, x.d, B, false, true, x.e);
    if (fused(c, KernelFamily::softmax)) {
      em.memory("attn.scale_mask_softmax", 2 * scores);
    } else {
      em.memory("attn.scale", 2 * scores);
      em.memory("attn.mask", 2 * scores + s * s);
      em.memory("attn.softmax", 2 * scores);
    }
    if (c.dropout) em.memory("attn.dropout", 2 * scores + mask);
    em.gemm("attn.pv.fprop", s, x.dv, s, B, false, false, x.e);
    return;
  }
  // O = P·V: dP = dO·Vᵀ, dV = Pᵀ·dO; S = Q·Kᵀ: dQ = dS·K, dK = dSᵀ·Q.
  em.gemm("attn.pv.dgrad_p", s, s, x.dv, B, false, true, x.e);
  em.gemm("attn.pv.dgrad_v", s, x.dv, s, B, true, false, x.e);
  if (c.dropout) em.memory("attn.dropout.bwd", 2 * scores + mask);
  if (fused(c, KernelFamily::softmax)) {
    em.memory("attn.scale_mask_softmax.bwd", 3 * scores);
  } else {
    em.memory("attn.softmax.bwd", 3 * scores);
    em.memory("attn.mask.bwd", 2 * scores + s * s);
    em.memory("attn.scale.bwd", 2 * scores);
  }
  em.gemm("attn.qk.dgrad_q", s, x.d, s, B, false, false, x.e);
  em.gemm("attn.qk.dgrad_k", s, x.d, s, B, true, false, x.e);
  if (gqa) em.memory("attn.repeat_kv.bwd", 2 * (kv + expanded));
}

std::vector<engine::Kernel> attention_core_kernels(const TransformerKernelConfig& c, Pass pass,
                                                   engine::KernelTable& names) {
  const LayerDims x = layer_dims(c);
  Emitter em(names, c.dtype);
  detail::core_attention(em, c, x, pass);
  return em.take();
}

}  // namespace clustersim::models::kernels
