// Memory per GPU under each data-parallel plan against the ZeRO paper's formulas
// (Rajbhandari et al. 2020, §3): with mixed-precision Adam (2-byte weights and gradients, K = 12
// bytes of fp32 master weights, momentum and variance per parameter) and N data-parallel ranks,
//   DDP      (2 + 2 + K)·Ψ
//   ZeRO-1   4Ψ + KΨ/N
//   ZeRO-2   2Ψ + (2 + K)Ψ/N
//   ZeRO-3   (4 + K)Ψ/N
// for weights + gradients + optimizer states. Ψ = 8e6 parameters here (8 layers of 1e6).
#include <gtest/gtest.h>

#include "models/run_scenario.hpp"

namespace clustersim::models {
namespace {

constexpr double kPsi = 8e6;
constexpr double kK = 12;

MemoryEstimate estimate_of(const std::string& plan, int gpus, int microbatches = 1) {
  const std::string text =
      "cluster: {nodes: 1, node: dgx-a100, gpus_per_node: " + std::to_string(gpus) + R"(}
model:
  layers: [{name: block, params: 1e6, forward_flops: 1e9, activation_bytes: 1MB, repeat: 8}]
training: {global_batch: )" +
      std::to_string(gpus * microbatches) +
      R"(, micro_batch: 1, precision: bf16, optimizer: adam}
parallel: {data_parallel: )" +
      plan + "}\nsimulation: {network_model: ideal}\n";
  const Scenario sc = parse_scenario(text, "zero.yaml");
  return run_scenario(sc).result.memory;
}

MemoryBreakdown memory_of(const std::string& plan, int gpus) {
  return estimate_of(plan, gpus).peak;
}

// Weights, all gradients and optimizer states, whether or not all gradients exist at the peak.
double model_states(const std::string& plan, int gpus) {
  return estimate_of(plan, gpus).model_states;
}

TEST(ZeroMemory, DdpKeepsSixteenBytesPerParameter) {
  for (int n : {2, 4, 8})
    EXPECT_DOUBLE_EQ(model_states("ddp", n), (2 + 2 + kK) * kPsi);
}

TEST(ZeroMemory, StageOneShardsTheOptimizerStates) {
  for (int n : {2, 4, 8}) {
    const auto m = memory_of("zero1", n);
    EXPECT_DOUBLE_EQ(model_states("zero1", n), 4 * kPsi + kK * kPsi / n) << "N = " << n;
    EXPECT_DOUBLE_EQ(m.optimizer, kK * kPsi / n);
  }
}

TEST(ZeroMemory, StageTwoShardsGradientsToo) {
  for (int n : {2, 4, 8})
    EXPECT_DOUBLE_EQ(model_states("zero2", n), 2 * kPsi + (2 + kK) * kPsi / n) << "N = " << n;
}

TEST(ZeroMemory, StageThreeAndFsdpShardEverything) {
  for (const char* plan : {"zero3", "fsdp"})
    for (int n : {2, 4, 8})
      EXPECT_DOUBLE_EQ(model_states(plan, n), (4 + kK) * kPsi / n) << plan << ", N = " << n;
}

TEST(ZeroMemory, FsdpBuffersHoldTheGatheredUnitsInFlight) {
  // One unit = one 1e6-parameter layer (2 bytes each). With prefetch 1 two units are gathered
  // at once, plus one unit of unsharded gradients before its reduce-scatter: 3 × 2e6 bytes.
  const auto m = memory_of("fsdp", 8);
  EXPECT_DOUBLE_EQ(m.buffers, 3 * 2e6);
}

// Gradient accumulation over 4 micro-batches: FSDP's no_sync() keeps every unit's unsharded
// 2-byte gradients (2Ψ) until the last micro-batch's reduce-scatter; by default only the 2Ψ/N
// shard accumulates. The model states (what the step holds) are (4 + K)Ψ/N either way.
TEST(ZeroMemory, FsdpNoSyncAccumulatesUnshardedGradients) {
  const MemoryEstimate no_sync = estimate_of("fsdp, fsdp: {no_sync: true}", 8, 4);
  EXPECT_DOUBLE_EQ(no_sync.peak.gradients, 2 * kPsi);
  EXPECT_DOUBLE_EQ(no_sync.model_states, (4 + kK) * kPsi / 8);
  const MemoryEstimate sharded = estimate_of("fsdp", 8, 4);
  EXPECT_DOUBLE_EQ(sharded.peak.gradients, 2 * kPsi / 8);
  EXPECT_DOUBLE_EQ(sharded.model_states, (4 + kK) * kPsi / 8);
}

}  // namespace
}  // namespace clustersim::models
