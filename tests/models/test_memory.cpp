// The memory each GPU needs (DESIGN.md "Memory model"; docs/memory.md):
// parameter-proportional terms from the shape's parameter count, activations from Korthikanti et
// al. 2022 times the micro-batches the pipeline schedule keeps in flight.
#include <gtest/gtest.h>

#include <string>

#include "models/run_scenario.hpp"
#include "models/scenario.hpp"

namespace clustersim::models {
namespace {

// --- Weights, gradients and optimizer states ---------------------------------------------------

// An untied GPT shape: l = 8, h = 1024, V = 32768, 2048 learned positions; tp 2, pp 2, dp 2 on one
// DGX A100 with DDP, bf16, Adam.
constexpr double kH = 1024, kV = 32768, kPositions = 2048;
// Per block (Megatron, biases and layernorms included): QKV 3h² + 3h, projection h² + h, fc1 4h² +
// 4h, fc2 4h² + h, two layernorms 4h: 12h² + 13h.
constexpr double kBlockParams = 12 * kH * kH + 13 * kH;
// Stage 0: word and position embeddings + 4 blocks; stage 1: 4 blocks + final layernorm (2h) +
// the output matrix V·h.
constexpr double kStage0Params = kV * kH + kPositions * kH + 4 * kBlockParams;
constexpr double kStage1Params = 4 * kBlockParams + 2 * kH + kV * kH;

// Mixed-precision Adam without sharding (Rajbhandari et al. 2020, §3.1): 2 bytes of bf16 weights,
// 2 of bf16 gradients and K = 12 of fp32 state (master weights, momentum, variance) per parameter
// of the rank's shard: the stage's parameters over tp, but the layernorms (4h a block, 2h the
// final one), which both TP ranks hold whole.
TEST(Memory, MixedPrecisionAdamKeeps16BytesPerParameterOfTheShard) {
  const std::string text =
      "name: gpt-memory\n"
      "cluster: {nodes: 1, node: dgx-a100}\n"
      "model: {num_layers: 8, hidden_size: 1024, num_heads: 16, vocab_size: 32768,\n"
      "        tied_embeddings: false}\n"
      "training: {global_batch: 8, micro_batch: 1, seq_len: 512, precision: bf16, optimizer: "
      "adam}\n"
      "parallel: {tp: 2, pp: 2, data_parallel: ddp}\n"
      "simulation: {network_model: ideal}\n";
  const auto est = run_scenario(parse_scenario(text, "test")).result.memory;
  ASSERT_EQ(est.per_stage.size(), 2u);
  const double norms[] = {4 * 4 * kH, 4 * 4 * kH + 2 * kH};
  const double shard[] = {(kStage0Params - norms[0]) / 2 + norms[0],
                          (kStage1Params - norms[1]) / 2 + norms[1]};
  for (int s = 0; s < 2; ++s) {
    SCOPED_TRACE("stage " + std::to_string(s));
    const auto& m = est.per_stage[static_cast<std::size_t>(s)];
    EXPECT_NEAR(m.weights, 2 * shard[s], 1.0);
    EXPECT_NEAR(m.gradients, 2 * shard[s], 1.0);
    EXPECT_NEAR(m.optimizer, 12 * shard[s], 1.0);
  }
}

// --- Activations -------------------------------------------------------------------------------

// GPT-3 175B's shape (h = 12288, a = 96, s = 2048, V = 51200) cut to 8 layers, pp 2 with 1F1B and
// m = 4 micro-batches of b = 2: stage 0 holds p − 0 = 2 micro-batches, stage 1 holds 1.
constexpr double kS = 2048, kB = 2, kHg = 12288, kA = 96, kVg = 51200;
constexpr double kSbh = kS * kB * kHg;
constexpr double kBlocksPerStage = 4;

Result gpt3_run(int tp, bool sequence_parallel, const std::string& recompute = "none") {
  const int dp = 8 / (tp * 2);
  const std::string text =
      "name: gpt3-8-layers\n"
      "cluster: {nodes: 1, node: dgx-a100}\n"
      "model: {preset: gpt3-175b, num_layers: 8}\n"
      "training: {global_batch: " +
      std::to_string(4 * 2 * dp) +
      ", micro_batch: 2, seq_len: 2048, precision: bf16, attention: standard, recompute: " +
      recompute +
      "}\n"
      "parallel: {tp: " +
      std::to_string(tp) +
      ", pp: 2, schedule: 1f1b, sequence_parallel: " + (sequence_parallel ? "true" : "false") +
      "}\n"
      "simulation: {network_model: ideal}\n";
  return run_scenario(parse_scenario(text, "test")).result;
}

// Korthikanti et al. 2022, Eq. 1–4, bytes per transformer layer and micro-batch (16-bit
// activations, 1-byte dropout masks).
double korthikanti(int t, bool sequence_parallel) {
  const double attention_core = 5 * kA * kS / kHg;
  if (t == 1) return kSbh * (34 + attention_core);
  if (sequence_parallel) return kSbh * (34 + attention_core) / t;
  return kSbh * (10 + 24.0 / t + attention_core / t);
}

// Outside the blocks (Korthikanti §4.3 and models/model_costs.cpp): the embedding keeps its
// dropout mask, s·b·h bytes; the LM head its final layernorm's input and the projection's input
// (2·s·b·h each) and the fp32 logits for the cross-entropy, 4·s·b·V split over the vocabulary.
// Sequence parallelism splits the s·b·h terms over t as well.
double embedding(int t, bool sp) {
  return kSbh / (sp ? t : 1);
}
double head(int t, bool sp) {
  return 4 * kSbh / (sp ? t : 1) + 4 * kS * kB * kVg / t;
}

void expect_activations(int tp, bool sp) {
  SCOPED_TRACE("tp " + std::to_string(tp) + (sp ? " with sequence parallelism" : ""));
  const auto est = gpt3_run(tp, sp).memory;
  ASSERT_EQ(est.per_stage.size(), 2u);
  const double layer = korthikanti(tp, sp);
  const double stage0 = 2 * (kBlocksPerStage * layer + embedding(tp, sp));
  const double stage1 = 1 * (kBlocksPerStage * layer + head(tp, sp));
  EXPECT_NEAR(est.per_stage_saved_activations[0], stage0, 1e-9 * stage0);
  EXPECT_NEAR(est.per_stage_saved_activations[1], stage1, 1e-9 * stage1);
  // The reported peak is the stage that needs the most in total; its activations at the peak
  // are at most what the micro-batches in flight saved plus one op's working memory.
  const bool first = est.per_stage[0].total() >= est.per_stage[1].total();
  EXPECT_EQ(est.peak_stage, first ? 0 : 1);
  EXPECT_LE(est.peak.activations, est.per_stage_saved_activations[first ? 0 : 1] +
                                      4 * kS * kB * kVg * 3 / tp + 2 * kA / tp * kS * kS * kB * 2);
}

TEST(Memory, ActivationsFollowKorthikantiWithoutTensorParallelism) {
  expect_activations(1, false);
}

TEST(Memory, ActivationsFollowKorthikantiWithTensorParallelism) {
  expect_activations(4, false);
}

TEST(Memory, ActivationsFollowKorthikantiWithSequenceParallelism) {
  expect_activations(4, true);
}

// Full recompute (Korthikanti §5, "full activation recomputation"): each layer keeps only its
// input, 2·s·b·h (÷t with sequence parallelism), per micro-batch in flight; while one block's
// backward runs its forward is recomputed, so one block's full activations come on top of what
// is still saved at that moment.
TEST(Memory, FullRecomputeKeepsTheLayerInputPlusOneRecomputedBlock) {
  for (const auto& [tp, sp] : {std::pair{1, false}, std::pair{4, true}}) {
    SCOPED_TRACE("tp " + std::to_string(tp));
    const auto est = gpt3_run(tp, sp, "full").memory;
    const double kept = 2 * kSbh / (sp ? tp : 1);
    const double block = korthikanti(tp, sp);
    const double stage0 = 2 * (kBlocksPerStage * kept + embedding(tp, sp));
    const double stage1 = 1 * (kBlocksPerStage * kept + head(tp, sp));
    EXPECT_NEAR(est.per_stage_saved_activations[0], stage0, 1e-9 * stage0);
    EXPECT_NEAR(est.per_stage_saved_activations[1], stage1, 1e-9 * stage1);
    // Stage 0's peak comes in a backward: the recomputed block on top of what is left.
    EXPECT_GE(est.per_stage[0].activations, block);
    EXPECT_LE(est.per_stage[0].activations, stage0 + block + 2 * kA / tp * kS * kS * kB * 2);
  }
}

// Interleaving: stage 0 of p = 2, v = 2, m = 4 (dp 4, 32 / (2 · 4)) holds Megatron's warm-up
// (p − 1)·2 + (v − 1)·p = 4 chunk activations plus one, each chunk 8 / (p·v) = 2 layers, the
// embedding riding with chunk 0. Virtual micro-batch k runs chunk (k / p) mod v forward, the
// reverse chunk backward: F c0m0 c0m1 c1m0 c1m1 c0m2 | B c1m0 | F c0m3 | B c1m1 | ... The most
// bytes are held after F c0m3: four chunk-0 activations (with the embedding's) and one chunk-1.
TEST(Memory, InterleavedStageHoldsItsWarmupPlusOneChunk) {
  const std::string text =
      "name: gpt3-interleaved\n"
      "cluster: {nodes: 1, node: dgx-a100}\n"
      "model: {preset: gpt3-175b, num_layers: 8}\n"
      "training: {global_batch: 32, micro_batch: 2, seq_len: 2048, precision: bf16,\n"
      "           attention: standard}\n"
      "parallel: {tp: 1, pp: 2, schedule: interleaved, virtual_stages: 2}\n"
      "simulation: {network_model: ideal}\n";
  const auto est = run_scenario(parse_scenario(text, "test")).result.memory;
  const double layer = korthikanti(1, false);
  const double chunk = 2 * layer;
  const double expected = 4 * (chunk + embedding(1, false)) + 1 * chunk;
  EXPECT_NEAR(est.per_stage_saved_activations[0], expected, 1e-9 * expected);
}

}  // namespace
}  // namespace clustersim::models
