// The GEMMs a scenario launches (`clustersim calibrate --shapes-from`, docs/calibration.md "GEMM
// shapes of a scenario"), against a GPT block worked by hand: h = 1024, 16 heads of 64, ffn 4h,
// 2 layers, vocabulary 32000, one sequence of t = 2048 tokens on one GPU, bf16, no recompute.
// Forward GEMMs per layer: QKV t×h×3h, projection t×h×h, fc1 t×h×4h, fc2 t×4h×h: 2·t·12h² FLOPs;
// the logits t×h×V: 2·t·h·V. Backward: twice the forward (input and weight gradients).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <set>
#include <string>

#include "models/gemm_shapes.hpp"

namespace clustersim::models {
namespace {

constexpr double kShapesH = 1024, kShapesT = 2048, kShapesV = 32000, kShapesLayers = 2;

std::string gpt(const std::string& attention) {
  return R"(cluster: {nodes: 1, node: dgx-a100, gpus_per_node: 1}
model: {name: tiny, num_layers: 2, hidden_size: 1024, num_heads: 16, ffn_hidden_size: 4096,
        vocab_size: 32000, max_positions: 2048}
training: {global_batch: 1, micro_batch: 1, seq_len: 2048, precision: bf16, recompute: none,
           attention: )" +
         attention + "}\nparallel: {data_parallel: ddp}\n";
}

std::array<std::uint64_t, 3> sorted_dims(const ScenarioGemm& g) {
  std::array<std::uint64_t, 3> d{g.m, g.n, g.k};
  std::sort(d.begin(), d.end());
  return d;
}

TEST(GemmShapes, AGptBlocksGemmsAndTheirFlopsAreTheHandWorkedOnes) {
  const auto shapes = scenario_gemm_shapes(parse_scenario(gpt("flash"), "tiny.yaml"));
  double flops = 0;
  std::set<std::array<std::uint64_t, 3>> dims;
  for (const auto& g : shapes) {
    EXPECT_EQ(g.dtype, "bf16");
    EXPECT_EQ(g.batch, 1u);  // flash attention: no batched score GEMMs
    flops += g.total_flops;
    dims.insert(sorted_dims(g));
  }
  const double forward =
      kShapesLayers * 2 * kShapesT * 12 * kShapesH * kShapesH + 2 * kShapesT * kShapesH * kShapesV;
  EXPECT_DOUBLE_EQ(flops, 3 * forward);
  // Every projection's dimensions appear (forward, or a gradient of the same sizes).
  for (const std::array<std::uint64_t, 3>& d : {std::array<std::uint64_t, 3>{1024, 2048, 3072},
                                                {1024, 1024, 2048},
                                                {1024, 2048, 4096},
                                                {1024, 2048, 32000}})
    EXPECT_TRUE(dims.count(d)) << d[0] << "x" << d[1] << "x" << d[2];
  // Five projections (QKV, projection, fc1, fc2, logits), each as forward, input-gradient and
  // weight-gradient GEMM of its own orientation: 15 distinct GEMMs, ranked by share of the FLOPs.
  EXPECT_EQ(shapes.size(), 15u);
  for (std::size_t i = 1; i < shapes.size(); ++i)
    EXPECT_GE(shapes[i - 1].total_flops, shapes[i].total_flops);
  // A limit keeps the largest.
  const auto top = scenario_gemm_shapes(parse_scenario(gpt("flash"), "tiny.yaml"), 2);
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[0].total_flops, shapes[0].total_flops);
}

TEST(GemmShapes, StandardAttentionAddsTheBatchedScoreGemmsOfEveryHead) {
  // Q·Kᵀ: per head an s×s product over d = 64, batch = heads × sequences = 16.
  const auto shapes = scenario_gemm_shapes(parse_scenario(gpt("standard"), "tiny.yaml"));
  const auto scores = std::find_if(shapes.begin(), shapes.end(), [](const ScenarioGemm& g) {
    return g.batch == 16 && sorted_dims(g) == std::array<std::uint64_t, 3>{64, 2048, 2048};
  });
  ASSERT_NE(scores, shapes.end());
  EXPECT_EQ(scores->launches % 2, 0u);  // per layer, and its input gradient of the same shape
}

}  // namespace
}  // namespace clustersim::models
