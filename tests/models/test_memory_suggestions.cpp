// What the memory verdict proposes when a plan does not fit (docs/memory.md "Verdict and
// suggestions"), on a layer list whose memory is worked by hand: Ψ = 8 × 1e9 parameters, bf16
// with fp32 master weights and Adam (K = 12 bytes of state per parameter), activations 4 GB per
// layer and sample, micro-batch 2, 8 × A100 80 GB (one DGX) with DDP, one micro-batch per rank.
//   weights 2Ψ = 16 GB, DDP buckets 2Ψ = 16 GB, optimizer 12Ψ = 96 GB, activations 8 × 4 × 2 =
//   64 GB at the forward's end: 192 GB, far over 80 GiB (85.9 GB).
// One change alone does not fit outright: ZeRO-1/2 leave the weights and activations (80 GB plus
// the shard); micro-batch 1 leaves 160 GB of states; full recompute leaves 128 GB of states;
// ZeRO-3 (2 + 12 of the 16 bytes over 8 ranks, 64 GB of activations) fits only without the
// fragmentation allowance. Offloading the optimizer needs a ZeRO stage.
// Together, micro-batch 1 + ZeRO-1 fit (16 + 32 + 12 GB and ZeRO-1's gradient buckets), and so do
// ZeRO-1 + optimizer offload (weights 16 GB + activations 64 GB, no optimizer term on the GPU);
// the first is the faster by the plan estimate and by the simulation.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "models/memory_suggestions.hpp"
#include "models/plan_estimate.hpp"
#include "models/result_json.hpp"
#include "models/run_scenario.hpp"

namespace clustersim::models {
namespace {

constexpr double kSuggestPsi = 8e9;
constexpr double kSuggestGiB = 1024.0 * 1024 * 1024;

constexpr const char* kOversizedPlan = R"(cluster: {nodes: 1, node: dgx-a100}
model:
  layers: [{name: block, params: 1e9, forward_flops: 1e12, activation_bytes: 4GB, repeat: 8}]
training: {global_batch: 16, micro_batch: 2, precision: bf16, optimizer: adam}
parallel: {data_parallel: ddp}
)";

Scenario oversized(const std::vector<std::string>& changes = {}) {
  return parse_scenario(kOversizedPlan, "suggestions.yaml", changes);
}

Result simulate_plan(const std::vector<std::string>& changes) {
  return run_scenario(oversized(changes)).result;
}

bool fits_outright(const MemoryEstimate& m) {
  return m.verdict() == MemoryVerdict::fits;
}

TEST(MemorySuggestions, NoChangeAloneFitsOutright) {
  const MemoryEstimate base = estimate_memory_only(oversized());
  EXPECT_NEAR(base.peak.weights, 2 * kSuggestPsi, 1);
  EXPECT_NEAR(base.peak.optimizer, 12 * kSuggestPsi, 1);
  EXPECT_NEAR(base.peak.activations, 8 * 4e9 * 2, 1);
  EXPECT_GT(base.total(), 190e9);
  const auto singles = memory_suggestions(oversized());
  ASSERT_FALSE(singles.empty());
  for (const auto& s : singles)
    EXPECT_NE(s.verdict, to_string(MemoryVerdict::fits)) << s.change;
  const auto zero3 = std::find_if(singles.begin(), singles.end(), [](const auto& s) {
    return s.change == "parallel.data_parallel=zero3";
  });
  ASSERT_NE(zero3, singles.end());
  EXPECT_EQ(zero3->verdict, to_string(MemoryVerdict::tight));
}

TEST(MemorySuggestions, TogetherMicroBatchOneAndZeroOneFitWithTheHandWorkedPeak) {
  const auto combined = memory_combination(oversized());
  ASSERT_TRUE(combined.has_value());
  // The fastest pair that fits (next test): half the activations and an eighth of the optimizer.
  const std::vector<std::string> pair{"training.micro_batch=1", "parallel.data_parallel=zero1"};
  EXPECT_EQ(combined->changes, pair);
  EXPECT_EQ(combined->verdict, to_string(MemoryVerdict::fits));
  // The changes are `--set` flags: loading the plan with them gives the hand-worked terms:
  // weights 2Ψ = 16 GB, activations 8 × 4 GB × 1 = 32 GB, optimizer 12Ψ / 8 = 12 GB.
  const MemoryEstimate m = estimate_memory_only(oversized(combined->changes));
  EXPECT_NEAR(m.peak.weights, 2 * kSuggestPsi, 1);
  EXPECT_NEAR(m.peak.activations, 32e9, 1);
  EXPECT_NEAR(m.peak.optimizer, 12 * kSuggestPsi / 8, 1);
  EXPECT_DOUBLE_EQ(combined->peak_bytes, m.total());
  EXPECT_LT(m.total(), 80 * kSuggestGiB);
  // Neither change suffices without the other.
  EXPECT_FALSE(fits_outright(estimate_memory_only(oversized({"parallel.data_parallel=zero1"}))));
  EXPECT_FALSE(fits_outright(estimate_memory_only(oversized({"training.micro_batch=1"}))));
}

TEST(MemorySuggestions, ZeroOneWithTheOptimizerOffloadedFitsWithTheHandWorkedPeak) {
  // Another pair that fits: weights 16 GB + activations 64 GB and no optimizer term on the GPU
  // (the buckets become ZeRO's reduce-scatter buckets); offload alone is refused with DDP.
  const MemoryEstimate m = estimate_memory_only(
      oversized({"parallel.data_parallel=zero1", "parallel.offload.optimizer=true"}));
  EXPECT_NEAR(m.peak.weights, 2 * kSuggestPsi, 1);
  EXPECT_NEAR(m.peak.activations, 64e9, 1);
  EXPECT_DOUBLE_EQ(m.peak.optimizer, 0);
  EXPECT_LT(m.peak.buffers, 0.1 * kSuggestGiB);  // ZeRO's buckets, not a copy of the gradients
  EXPECT_TRUE(fits_outright(m));
  EXPECT_THROW(oversized({"parallel.offload.optimizer=true"}), ScenarioError);
}

TEST(MemorySuggestions, TheCombinationIsTheFastestOfThoseThatFitByThePlanEstimate) {
  const auto combined = memory_combination(oversized());
  ASSERT_TRUE(combined.has_value());
  const PlanModelFigures f = plan_model_figures(oversized());
  const double chosen = estimate_plan(oversized(combined->changes), f).iteration_s;
  EXPECT_NEAR(combined->estimated_time_ratio, chosen / estimate_plan(oversized(), f).iteration_s,
              1e-12);
  // Other pairs that fit outright: full recompute (a second forward) with ZeRO-1, and ZeRO-1 with
  // the optimizer stepped on the CPU (96 GB of states at the host's bandwidth). Micro-batch 1
  // costs nothing here: a layer list's ops run at the roofline, linear in the samples.
  const Result fastest = simulate_plan(combined->changes);
  for (const std::vector<std::string>& other :
       {std::vector<std::string>{"training.recompute=full", "parallel.data_parallel=zero1"},
        std::vector<std::string>{"parallel.data_parallel=zero1",
                                 "parallel.offload.optimizer=true"}}) {
    ASSERT_TRUE(fits_outright(estimate_memory_only(oversized(other)))) << other[0];
    EXPECT_LT(chosen, estimate_plan(oversized(other), f).iteration_s) << other[0];
    // The simulation orders them the same way.
    EXPECT_LT(fastest.iteration_time_s, simulate_plan(other).iteration_time_s) << other[0];
  }
}

TEST(MemorySuggestions, NothingIsProposedWhenNoCombinationFits) {
  // 1e12 parameters on one GPU: no data parallelism to shard over, no second GPU to split on.
  const Scenario one = parse_scenario(R"(cluster: {nodes: 1, node: dgx-a100, gpus_per_node: 1}
model:
  layers: [{name: block, params: 1e11, forward_flops: 1e12, activation_bytes: 1GB, repeat: 10}]
training: {global_batch: 1, micro_batch: 1, precision: bf16, optimizer: adam}
parallel: {data_parallel: ddp}
)",
                                      "one.yaml");
  EXPECT_FALSE(memory_combination(one).has_value());
}

TEST(MemorySuggestions, TheResultCarriesTheCombinationOnlyWhenNoChangeAloneFits) {
  const RunOutput out = run_scenario(oversized());
  ASSERT_TRUE(out.result.memory.combined.has_value());
  EXPECT_EQ(out.result.memory.combined->changes.size(), 2u);
  const auto json = result_to_json(out.result, true)["memory"]["combined_suggestion"];
  EXPECT_EQ(json["changes"].size(), 2u);
  EXPECT_EQ(json["verdict"], "fits");
  // With micro-batch 1 already, ZeRO-1 alone fits (16 + 12 + 32 GB): no combination is sought.
  const RunOutput near = run_scenario(oversized({"training.micro_batch=1"}));
  EXPECT_FALSE(near.result.memory.combined.has_value());
  EXPECT_TRUE(result_to_json(near.result, true)["memory"]["combined_suggestion"].is_null());
}

}  // namespace
}  // namespace clustersim::models
