// What eager PyTorch model code (HF Transformers, torchtune, LitGPT: training.fused_kernels
// false) keeps beyond the fused kernels, and the chunked loss (training.loss_chunks), from the
// tensors the code allocates, worked by hand for a Llama 3.2 3B layer: T = 2 · 4096 tokens,
// h = 3072, 24 query heads and 8 KV heads of 128, vocabulary 128,256, bf16.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "models/kernels/saved_tensors.hpp"
#include "models/kernels/transformer_kernels.hpp"

namespace clustersim::models::kernels {
namespace {

constexpr double kEagerTokens = 2 * 4096, kEagerHidden = 3072, kEagerKvWidth = 8 * 128,
                 kEagerVocab = 128256;

TransformerKernelConfig eager_llama32_3b(bool fused) {
  TransformerKernelConfig c;
  c.micro_batch = 2;
  c.seq = 4096;
  c.hidden = 3072;
  c.heads = 24;
  c.kv_heads = 8;
  c.ffn = 8192;
  c.vocab = 128256;
  c.activation = Activation::swiglu;
  c.norm = Norm::rmsnorm;
  c.bias = false;
  c.learned_positions = false;
  c.dropout = false;
  c.attention = AttentionImpl::flash;
  c.fused_kernels = fused;
  return c;
}

// Eager attention block: RMSNorm keeps x.float() (4 B) and x̂ (2 B) where the fused norm keeps x
// (2 B); k and v are expanded from 8 to 24 heads before SDPA, which keeps the expanded copies;
// the output [b, 24, s, 128] is kept by SDPA and its transposed contiguous copy by o_proj.
TEST(EagerModelCode, AttentionKeepsFp32NormInputExpandedKvAndTwoCopiesOfTheOutput) {
  const double eager = saved_bytes(attention_block_saved(eager_llama32_3b(false)));
  const double fused = saved_bytes(attention_block_saved(eager_llama32_3b(true)));
  const double norm = kEagerTokens * kEagerHidden * (4 + 2 - 2);
  const double kv = 2 * kEagerTokens * (kEagerHidden - kEagerKvWidth) * 2;
  const double output_copy = kEagerTokens * kEagerHidden * 2;
  EXPECT_DOUBLE_EQ(eager - fused, norm + kv + output_copy);
  // In all, per token: norm 6h, q/k/v proj input 2h, q, k, v 2h each, output 2h twice; and
  // FlashAttention's fp32 log-sum-exp per head.
  EXPECT_DOUBLE_EQ(eager, kEagerTokens * kEagerHidden * (6 + 2 + 6 + 4) + kEagerTokens * 24 * 4);
}

TEST(EagerModelCode, AttentionKernelsExpandKvAndCopyTheOutput) {
  engine::KernelTable names;
  auto names_of = [&](const std::vector<engine::Kernel>& ks) {
    std::string all;
    for (const auto& k : ks)
      all += names.name_of(k.name) + " ";
    return all;
  };
  const std::string eager_fwd =
      names_of(attention_block_kernels(eager_llama32_3b(false), Pass::forward, names));
  const std::string eager_bwd =
      names_of(attention_block_kernels(eager_llama32_3b(false), Pass::backward, names));
  const std::string fused_fwd =
      names_of(attention_block_kernels(eager_llama32_3b(true), Pass::forward, names));
  EXPECT_NE(eager_fwd.find("attn.repeat_kv "), std::string::npos);
  EXPECT_NE(eager_fwd.find("attn.out.contiguous "), std::string::npos);
  EXPECT_NE(eager_fwd.find("attn.norm.to_fp32 "), std::string::npos);
  EXPECT_NE(eager_bwd.find("attn.repeat_kv.bwd "), std::string::npos);
  EXPECT_NE(eager_bwd.find("attn.out.contiguous.bwd "), std::string::npos);
  EXPECT_EQ(fused_fwd.find("attn.repeat_kv"), std::string::npos);
  EXPECT_EQ(fused_fwd.find("attn.out.contiguous"), std::string::npos);
  // The expansion reads k and v (8 heads) and writes them on 24: 2 · T · (1024 + 3072) · 2 B.
  for (const auto& k : attention_block_kernels(eager_llama32_3b(false), Pass::forward, names)) {
    if (names.name_of(k.name) == "attn.repeat_kv") {
      EXPECT_DOUBLE_EQ(k.bytes, 2 * kEagerTokens * (kEagerKvWidth + kEagerHidden) * 2);
    }
  }
}

// The whole micro-batch's loss (torch eager): the LM head keeps the fp32 log-softmax, and while
// the loss runs the bf16 logits and their fp32 copy live too: 2 + 4 + 4 bytes per logit.
// Chunked and compiled (loss_chunks 8): only the bf16 logits are kept, and the backward holds one
// chunk's bf16 gradient.
TEST(EagerModelCode, ChunkedLossKeepsTheSixteenBitLogitsOnly) {
  auto c = eager_llama32_3b(false);
  const double logits = kEagerTokens * kEagerVocab;
  const double head_input =
      kEagerTokens * kEagerHidden * (4 + 2 + 2);  // norm's fp32 copy, x̂; proj input
  const LayerSavedTensors whole = lm_head_saved(c);
  EXPECT_DOUBLE_EQ(saved_bytes(whole), head_input + logits * 4);
  EXPECT_DOUBLE_EQ(whole.transient_forward, logits * (2 + 4));
  c.loss_chunks = 8;
  const LayerSavedTensors chunked = lm_head_saved(c);
  EXPECT_DOUBLE_EQ(saved_bytes(chunked), head_input + logits * 2);
  EXPECT_DOUBLE_EQ(chunked.transient_forward, 0);
  EXPECT_DOUBLE_EQ(chunked.transient_backward, logits / 8 * 2);
}

TEST(EagerModelCode, ChunkedLossProjectsEachChunkWithItsOwnGemm) {
  engine::KernelTable names;
  auto c = eager_llama32_3b(false);
  c.loss_chunks = 8;
  int gemms = 0;
  for (const auto& k : lm_head_kernels(c, Pass::forward, names))
    if (names.name_of(k.name) == "lm_head.logits.fprop") {
      ++gemms;
      EXPECT_EQ(k.m, 1024u);  // 8192 tokens / 8
      EXPECT_EQ(k.n, 128256u);
      EXPECT_EQ(k.k, 3072u);
    }
  EXPECT_EQ(gemms, 8);
}

}  // namespace
}  // namespace clustersim::models::kernels
