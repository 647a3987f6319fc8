// The activations a layer keeps follow its kernels' saved tensors (models/kernels/
// saved_tensors.hpp). With standard attention, unfused kernels and GeLU, Korthikanti et al.
// 2022's formulas fall out of the lists exactly.
#include <gtest/gtest.h>

#include "models/kernels/saved_tensors.hpp"

namespace clustersim::models::kernels {
namespace {

constexpr double kS = 2048, kB = 2, kH = 12288, kA = 96;
constexpr double kSbh = kS * kB * kH;

TransformerKernelConfig gpt(int tp, bool sp, AttentionImpl attention = AttentionImpl::standard) {
  TransformerKernelConfig c;
  c.micro_batch = static_cast<long>(kB);
  c.seq = static_cast<long>(kS);
  c.hidden = static_cast<long>(kH);
  c.heads = static_cast<int>(kA);
  c.ffn = static_cast<long>(4 * kH);
  c.vocab = 51200;
  c.tp = tp;
  c.sequence_parallel = sp;
  c.attention = attention;
  c.fused_kernels = false;
  c.dropout = true;
  return c;
}

double layer(const TransformerKernelConfig& c, RecomputePolicy policy) {
  TransformerKernelConfig dense = c;
  return kept_bytes(attention_block_saved(c), policy, true) +
         kept_bytes(mlp_block_saved(dense), policy, true);
}

TEST(SavedTensors, KorthikantiWithoutParallelism) {
  EXPECT_DOUBLE_EQ(layer(gpt(1, false), RecomputePolicy::none), kSbh * (34 + 5 * kA * kS / kH));
}

TEST(SavedTensors, KorthikantiWithTensorParallelism) {
  for (int t : {2, 4, 8})
    EXPECT_DOUBLE_EQ(layer(gpt(t, false), RecomputePolicy::none),
                     kSbh * (10 + 24.0 / t + 5 * kA * kS / (kH * t)))
        << "t = " << t;
}

TEST(SavedTensors, KorthikantiWithSequenceParallelism) {
  for (int t : {2, 4, 8})
    EXPECT_DOUBLE_EQ(layer(gpt(t, true), RecomputePolicy::none), kSbh * (34 + 5 * kA * kS / kH) / t)
        << "t = " << t;
}

TEST(SavedTensors, SelectiveRecomputeDropsTheAttentionCore) {
  // Korthikanti §4.2: 34·s·b·h/t with sequence parallelism and selective recompute.
  EXPECT_DOUBLE_EQ(layer(gpt(8, true), RecomputePolicy::selective), kSbh * 34 / 8);
  EXPECT_DOUBLE_EQ(layer(gpt(1, false), RecomputePolicy::selective), kSbh * 34);
}

TEST(SavedTensors, FullRecomputeKeepsTheBlockInput) {
  EXPECT_DOUBLE_EQ(layer(gpt(1, false), RecomputePolicy::full), 2 * kSbh);
  EXPECT_DOUBLE_EQ(layer(gpt(8, true), RecomputePolicy::full), 2 * kSbh / 8);
  // What recompute brings back is everything else of the block.
  const auto c = gpt(1, false);
  const double back = recomputed_bytes(attention_block_saved(c), RecomputePolicy::full, true) +
                      recomputed_bytes(mlp_block_saved(c), RecomputePolicy::full, true);
  EXPECT_DOUBLE_EQ(back + 2 * kSbh, kSbh * (34 + 5 * kA * kS / kH));
}

// Autocast (training.amp) over fp32 parameters: the residual stream is fp32, so each norm keeps a
// 4-byte input (+2·s·b·h per norm, two per layer), and softmax saves its fp32 output (+2·a·s²·b):
// Korthikanti's 34 + 5·a·s/h becomes 38 + 7·a·s/h; full recompute keeps the fp32 block input.
TEST(SavedTensors, AutocastKeepsFp32ResidualAndSoftmax) {
  auto c = gpt(1, false);
  c.autocast = true;
  EXPECT_DOUBLE_EQ(layer(c, RecomputePolicy::none), kSbh * (38 + 7 * kA * kS / kH));
  EXPECT_DOUBLE_EQ(layer(c, RecomputePolicy::full), 4 * kSbh);
  // Without dropout the probabilities' matmul saves its own 16-bit cast of the fp32 softmax.
  c.dropout = false;
  auto plain = gpt(1, false);
  plain.dropout = false;
  const double probs = kA * kS * kS * kB;
  EXPECT_DOUBLE_EQ(
      saved_bytes(attention_block_saved(c)) - saved_bytes(attention_block_saved(plain)),
      2 * kSbh + 2 * probs + 2 * probs);  // fp32 norm input, fp32 softmax, cast
}

TEST(SavedTensors, FlashAttentionKeepsOutputAndLogSumExpNotTheScores) {
  const auto standard = attention_block_saved(gpt(1, false));
  auto fused_flash = gpt(1, false, AttentionImpl::flash);
  fused_flash.fused_kernels = true;  // Megatron's layout: the kernel's output is the proj input
  const auto flash = attention_block_saved(fused_flash);
  // Standard: 11·s·b·h + 5·a·s²·b plus the norm input; flash: the 5·a·s²·b become the fp32
  // log-sum-exp, 4·a·s·b.
  EXPECT_DOUBLE_EQ(saved_bytes(standard) - saved_bytes(flash),
                   5 * kA * kS * kS * kB - 4 * kA * kS * kB);
  EXPECT_GT(standard.transient_backward, flash.transient_backward);
}

TEST(SavedTensors, SwiGluKeepsGateUpAndOutput) {
  auto c = gpt(1, false);
  c.activation = Activation::swiglu;
  c.ffn = 8192;
  c.dropout = false;
  const double f = 8192, T = kS * kB;
  const double base = 2 * T * kH * 2;  // norm input and fc1 input
  c.fused_kernels = true;
  EXPECT_DOUBLE_EQ(saved_bytes(mlp_block_saved(c)), base + T * (2 * f + f) * 2);
  // Eager silu(gate) · up also keeps silu's output; eager RMSNorm keeps an fp32 copy of its
  // input (4 bytes where the fused norm keeps the 2-byte input) and the 2-byte normalized x.
  c.fused_kernels = false;
  c.norm = Norm::rmsnorm;
  EXPECT_DOUBLE_EQ(saved_bytes(mlp_block_saved(c)),
                   base + T * kH * (4 - 2) + T * kH * 2 + T * (2 * f + 2 * f) * 2);
}

TEST(SavedTensors, OpLevelPolicyKeepsMatmulOutputsAndTheBlockInput) {
  auto c = gpt(1, false, AttentionImpl::flash);
  c.dropout = false;
  const double T = kS * kB;
  const auto attn = attention_block_saved(c);
  // block input, qkv output (3h), attention output (h), its lse, projection output (h).
  EXPECT_DOUBLE_EQ(kept_bytes(attn, RecomputePolicy::selective_op, true),
                   T * kH * 2 * (1 + 3 + 1 + 1) + kB * kA * kS * 4);
  // fc1 output (4h) and fc2 output (h).
  EXPECT_DOUBLE_EQ(kept_bytes(mlp_block_saved(c), RecomputePolicy::selective_op, true),
                   T * 2 * (4 * kH + kH));
}

TEST(SavedTensors, MoeExpertsKeepTheirRoutedTokens) {
  auto c = gpt(1, false, AttentionImpl::flash);
  c.num_experts = 8;
  c.top_k = 2;
  c.expert_ffn = 4 * static_cast<long>(kH);
  c.tokens_per_expert = 1000;
  c.local_experts = 2;
  auto more = c;
  more.tokens_per_expert = 2000;  // a capacity factor of 2
  const double routed = 2 * 1000;
  EXPECT_DOUBLE_EQ(saved_bytes(mlp_block_saved(more)) - saved_bytes(mlp_block_saved(c)),
                   routed * (kH + 4 * kH + 4 * kH + kH) * 2);
}

}  // namespace
}  // namespace clustersim::models::kernels
