// PyTorch autocast (training.amp) and zero_grad(set_to_none=False) (training.set_to_none) in the
// memory model (docs/memory.md "Precision: autocast"). Expected figures are the parameter count
// of the shape times bytes per parameter, derived by hand.
#include <gtest/gtest.h>

#include <string>

#include "models/memory_model.hpp"
#include "models/plans/data_parallel.hpp"
#include "models/scenario.hpp"

namespace clustersim::models {
namespace {

// An untied GPT shape on one GPU: l = 4, h = 1024, V = 32768, 2048 learned positions. Per block
// (biases and layer norms included) 12h² + 13h; embeddings V·h + 2048·h; final norm 2h; output
// matrix V·h.
constexpr double kH = 1024, kV = 32768, kPositions = 2048;
constexpr double kParams =
    kV * kH + kPositions * kH + 4 * (12 * kH * kH + 13 * kH) + 2 * kH + kV * kH;

MemoryEstimate estimate(const std::string& training) {
  const std::string text =
      "name: amp-memory\n"
      "cluster: {nodes: 1, gpus_per_node: 1, gpu: A100-SXM4-80GB}\n"
      "model: {num_layers: 4, hidden_size: 1024, num_heads: 16, vocab_size: 32768,\n"
      "        tied_embeddings: false}\n"
      "training: {global_batch: 1, micro_batch: 1, seq_len: 512, optimizer: adam,\n"
      "           optimizer_impl: for_loop, attention: standard, " +
      training +
      "}\n"
      "simulation: {network_model: ideal}\n";
  return estimate_memory_only(parse_scenario(text, "test"));
}

TEST(MemoryAmp, OptimizerStatesAreTheMomentsOnly) {
  TrainingConfig t;
  t.precision = Precision::fp16;
  t.amp = true;
  t.optimizer = Optimizer::adam;
  EXPECT_DOUBLE_EQ(optimizer_state_bytes_per_param(t), 8.0);  // m and v in fp32
  t.optimizer = Optimizer::sgd;
  t.momentum = 0.9;
  EXPECT_DOUBLE_EQ(optimizer_state_bytes_per_param(t), 4.0);  // momentum in fp32
  t.amp = false;
  EXPECT_DOUBLE_EQ(optimizer_state_bytes_per_param(t), 8.0);  // fp32 master + momentum
}

// HF's "18 bytes per model parameter" for mixed-precision AdamW: fp32 weights (4) and their
// 16-bit autocast copies (2), fp32 gradients (4), fp32 m and v (8). The copies are all alive at
// the end of the forward, where the activations peak; the zeroed gradients of the last step
// (set_to_none: false) are there too.
TEST(MemoryAmp, AutocastHolds18BytesPerParameterAtTheForwardPeak) {
  const auto est = estimate("precision: fp16, amp: true, set_to_none: false");
  EXPECT_NE(est.phase.find("lm_head"), std::string::npos) << est.phase;
  EXPECT_NEAR(est.peak.weights, 6 * kParams, 1.0);
  EXPECT_NEAR(est.peak.gradients, 4 * kParams, 1.0);
  EXPECT_NEAR(est.peak.optimizer, 8 * kParams, 1.0);
  // Megatron-style fp16 (16-bit weights and gradients, fp32 master in the states): 16 bytes.
  const auto megatron = estimate("precision: fp16, set_to_none: false");
  EXPECT_NEAR(megatron.peak.weights + megatron.peak.gradients + megatron.peak.optimizer,
              16 * kParams, 1.0);
}

TEST(MemoryAmp, ZeroGradWithoutSetToNoneKeepsGradientsThroughTheForward) {
  // One micro-batch: with set_to_none the forward runs before any gradient exists; without it,
  // last step's zeroed gradients are all there.
  const auto freed = estimate("precision: fp32, set_to_none: true");
  const auto kept = estimate("precision: fp32, set_to_none: false");
  // The peak is at the LM head's forward or first backward, before a gradient of this step.
  ASSERT_NE(kept.phase.find("lm_head"), std::string::npos) << kept.phase;
  EXPECT_NEAR(kept.peak.gradients, 4 * kParams, 1.0);
  // Freed, the gradients only build up in the backward as the activations go.
  EXPECT_GT(kept.total(), freed.total());
  EXPECT_LT(freed.peak.gradients, 4 * kParams);
}

}  // namespace
}  // namespace clustersim::models
