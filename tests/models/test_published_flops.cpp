// Megatron-Bridge's FLOP count (models/published_flops.hpp) against the figures NVIDIA printed
// with it: the 25.11 performance table gives tokens/s/GPU and "Model TFLOP/sec/GPU" for the same
// runs, so their ratio is the count per token that table used.
#include <gtest/gtest.h>

#include <stdexcept>
#include <variant>

#include "models/published_flops.hpp"

namespace clustersim::models {
namespace {

const TransformerSpec& preset_transformer(const char* name) {
  const ModelSpec* m = find_model(name);
  if (m == nullptr) throw std::logic_error(std::string("no preset ") + name);
  return std::get<TransformerSpec>(m->body);
}

// Megatron-Bridge docs/performance-summary.md @00b7660, 25.11 table: DGX-H100 LLAMA3_8B FP8-CS
// seq 8192, 14451 tokens/s/GPU and 744 TFLOP/s/GPU (validation/training/nemo2511-*.yaml).
TEST(MegatronBridgeFlops, Llama3_8bMatchesTheRatioOfTheNemo2511Table) {
  const double per_token =
      megatron_bridge_flops_per_token(preset_transformer("llama3-8b"), 8192, 1);
  EXPECT_NEAR(per_token / (744e12 / 14451.0), 1.0, 1e-3);
  // By hand: 3 · (32 · 4·4096·(4096 + 1024 + 4096) + 32 · 4·14336·4096·1.5 + 2·4096·128256).
  EXPECT_DOUBLE_EQ(per_token, 51470401536.0);
}

// Same table, DGX-H100 LLAMA3.1_405B, TP 8: 292 tokens/s/GPU and 737 TFLOP/s/GPU; the
// vocabulary 128256 is padded to a multiple of 128 · 8 = 1024 (129024).
TEST(MegatronBridgeFlops, Llama3_405bAtTp8PadsTheVocabularyAndMatchesTheTable) {
  const double per_token =
      megatron_bridge_flops_per_token(preset_transformer("llama3-405b"), 8192, 8);
  EXPECT_NEAR(per_token / (737e12 / 292.0), 1.0, 1e-3);
  EXPECT_DOUBLE_EQ(per_token, 2524031483904.0);
}

// The causal core is counted half: doubling s adds 3 · L · 4·h·(s/2) per token.
TEST(MegatronBridgeFlops, TheAttentionCoreGrowsWithHalfTheSequence) {
  const TransformerSpec& m = preset_transformer("llama3-8b");
  const double a = megatron_bridge_flops_per_token(m, 4096, 1);
  const double b = megatron_bridge_flops_per_token(m, 8192, 1);
  EXPECT_DOUBLE_EQ(b - a, 3.0 * 32 * 4.0 * 4096 * (4096 / 2.0));
}

TEST(MegatronBridgeFlops, MixtureOfExpertsIsRefused) {
  TransformerSpec m = preset_transformer("llama3-8b");
  m.moe = MoeSpec{};
  EXPECT_THROW(megatron_bridge_flops_per_token(m, 4096, 1), std::invalid_argument);
}

}  // namespace
}  // namespace clustersim::models
