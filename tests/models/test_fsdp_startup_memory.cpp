// Start-up memory of FSDP when the model is built whole on each GPU before it is wrapped
// (parallel.fsdp.init: device; docs/memory.md "Start-up"). Expected figures are Llama 2's
// parameter counts by hand (h, ffn, vocabulary) times bytes per parameter, and the segments the
// per-parameter blocks leave, placed best-fit by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "models/memory_model.hpp"
#include "models/memory_suggestions.hpp"
#include "models/plan_search.hpp"
#include "models/scenario.hpp"
#include "tests/models/scenario_error_check.hpp"

namespace clustersim::models {
namespace {

// A Llama 2 decoder layer: q, k, v, o (h²), gate, up, down (h·ffn), two RMSNorm weights (h).
constexpr double layer_params(double h, double ffn) {
  return 4 * h * h + 3 * h * ffn + 2 * h;
}
// The model: its layers, the untied embedding and output (V·h each), the final norm (h).
constexpr double model_params(double layers, double h, double ffn, double vocab) {
  return layers * layer_params(h, ffn) + 2 * vocab * h + h;
}

std::string torchtune_7b(const std::string& init, int gpus) {
  return "name: startup\n"
         "cluster: {nodes: 1, gpus_per_node: " +
         std::to_string(gpus) +
         ", gpu: A100-SXM4-80GB}\n"
         "model: llama2-7b\n"
         "training: {global_batch: " +
         std::to_string(2 * gpus) +
         ", micro_batch: 2, seq_len: 512, precision: fp32, recompute: full,\n"
         "           optimizer: sgd, attention: standard, optimizer_impl: foreach}\n"
         "parallel: {data_parallel: fsdp, fsdp: {root_unit: true, init: " +
         init +
         "}}\n"
         "simulation: {network_model: ideal}\n";
}

TEST(FsdpStartupMemory, TheWholeModelAndOneFlattenedUnitAreStartUpsPeak) {
  const double layer = layer_params(4096, 11008);             // 202,383,360
  const double whole = model_params(32, 4096, 11008, 32000);  // 6,738,415,616
  ASSERT_DOUBLE_EQ(whole, 6738415616.0);
  const auto device = estimate_memory_only(parse_scenario(torchtune_7b("device", 2), "t"));
  EXPECT_DOUBLE_EQ(device.startup_peak, 4 * (whole + layer));
  EXPECT_DOUBLE_EQ(device.startup_total(), 4 * (whole + layer) + device.overheads.cuda_context);
  // The model arriving sharded: no start-up term, the same training peak.
  const auto sharded = estimate_memory_only(parse_scenario(torchtune_7b("sharded", 2), "t"));
  EXPECT_DOUBLE_EQ(sharded.startup_peak, 0.0);
  EXPECT_DOUBLE_EQ(sharded.overheads.startup_cache, 0.0);
  EXPECT_DOUBLE_EQ(sharded.total(), device.total());
}

TEST(FsdpStartupMemory, FlatShardsLargerThanEveryParameterCannotReuseStartUpsBlocks) {
  // Two ranks: a layer's shard is 101,191,680 parameters, 404,766,720 B in fp32, larger than any
  // block parameter (h·ffn = 45,088,768 params, 180 MB) but not than the embedding's and the
  // output's blocks (32000·4096·4 = 524,288,000 B): two of the 64 layer shards (weights and
  // gradients, SGD without momentum has no state) go there, one each. Nothing else fits: the
  // root's shards (262,148,096 / 2 params · 4 = 524,296,192 B) are 8,192 B too large, and the
  // gathered units and unsharded gradients are whole units.
  const double whole = model_params(32, 4096, 11008, 32000);
  const double shard = 4 * layer_params(4096, 11008) / 2;
  ASSERT_DOUBLE_EQ(shard, 404766720.0);
  const double root = 2 * 32000.0 * 4096 + 4096;
  const double items = 64 * shard + 2 * (4 * root / 2)  // layer and root shards, w and g
                       + 4 * root + 2 * 4 * layer_params(4096, 11008)  // gathered: root, 2 units
                       + 2 * 4 * root;  // unsharded gradients at the embedding: 2 × the root's
  const double uncarvable = items - 2 * shard;
  const auto m = estimate_memory_only(parse_scenario(torchtune_7b("device", 2), "t"));
  const double states = m.peak.weights + m.peak.gradients + m.peak.optimizer + m.peak.buffers;
  const double small = m.allocated() - std::min(uncarvable, states);
  EXPECT_NEAR(m.overheads.startup_cache, 4 * whole - small, 1.0);
  EXPECT_NEAR(m.reserved(), m.allocated() + m.overheads.fragmentation + 4 * whole - small, 1.0);
  // Reserved, not needed: the verdict and the peak per GPU leave it out.
  EXPECT_DOUBLE_EQ(m.total(), m.allocated() + m.overheads.cuda_context + m.overheads.nccl);
}

TEST(FsdpStartupMemory, ShardsSmallerThanAParameterAreCarvedFromTheCache) {
  // Eight ranks: a layer's shard (25,297,920 params, 101 MB) and the root's (131 MB) fit in the
  // per-parameter blocks (four 180 MB per layer, 524 MB for the embedding and the output); only
  // the gathered units and the unsharded gradients need segments of their own.
  const double whole = model_params(32, 4096, 11008, 32000);
  const double root = 2 * 32000.0 * 4096 + 4096;
  const double unit = layer_params(4096, 11008);
  const double uncarvable = 4 * root + 2 * 4 * unit + 2 * 4 * root;
  const auto m = estimate_memory_only(parse_scenario(torchtune_7b("device", 8), "t"));
  const double states = m.peak.weights + m.peak.gradients + m.peak.optimizer + m.peak.buffers;
  const double small = m.allocated() - std::min(uncarvable, states);
  EXPECT_NEAR(m.overheads.startup_cache, 4 * whole - small, 1.0);
}

TEST(FsdpStartupMemory, AStartUpThatDoesNotFitIsTheVerdictAndShardedInitTheFirstChange) {
  // Llama 2 7B in fp32 built whole on a 24 GiB GPU: 4 × (6,738,415,616 + 202,383,360) =
  // 27.8 GB > 25.8 GB before FSDP shards it over 8 GPUs; trained sharded, the model states are
  // 8 B × 6.74e9 / 8 = 6.7 GB.
  const std::string text =
      "name: startup-24g\n"
      "cluster: {nodes: 1, gpus_per_node: 8, gpu: {preset: A100-SXM4-40GB, memory: 24GiB}}\n"
      "model: llama2-7b\n"
      "training: {global_batch: 8, micro_batch: 1, seq_len: 512, precision: fp32,\n"
      "           recompute: full, optimizer: sgd, attention: standard}\n"
      "parallel: {data_parallel: fsdp, fsdp: {init: device}}\n"
      "simulation: {network_model: ideal}\n";
  const Scenario sc = parse_scenario(text, "t");
  const double whole = model_params(32, 4096, 11008, 32000);
  const auto m = estimate_memory_only(sc);
  EXPECT_DOUBLE_EQ(m.startup_peak, 4 * (whole + layer_params(4096, 11008)));
  EXPECT_GT(m.startup_total(), 24.0 * (1 << 30));
  EXPECT_LT(m.total(), m.capacity);
  EXPECT_FALSE(m.fits());
  EXPECT_EQ(m.verdict(), MemoryVerdict::does_not_fit);
  EXPECT_DOUBLE_EQ(m.needed(), m.startup_total());
  const auto changes = memory_suggestions(sc);
  ASSERT_FALSE(changes.empty());
  EXPECT_EQ(changes.front().change, "parallel.fsdp.init=sharded");
  EXPECT_TRUE(changes.front().fits);
  EXPECT_DOUBLE_EQ(changes.front().peak_bytes, m.total());
}

TEST(FsdpStartupMemory, ThePlanSearchKeepsTheOtherStrategiesPlans) {
  // fsdp.init: device is refused with ddp or zero (it is FSDP's start-up): the search's DDP and
  // ZeRO candidates start sharded instead of being dropped as invalid, so a base that builds its
  // model on the GPU ranks as many plans as one that does not.
  PlanSearchOptions options;
  options.top = 1;
  const auto device = search_plans(parse_scenario(torchtune_7b("device", 2), "t"), options);
  const auto sharded = search_plans(parse_scenario(torchtune_7b("sharded", 2), "t"), options);
  EXPECT_EQ(device.invalid, sharded.invalid);
  EXPECT_EQ(device.ranked, sharded.ranked);
}

TEST(FsdpStartupMemory, InitIsPyTorchFsdpsAndOneOfTwoValues) {
  const std::string head =
      "name: bad\n"
      "cluster: {nodes: 1, gpus_per_node: 8, gpu: A100-SXM4-80GB}\n"
      "model: llama2-7b\n"
      "training: {global_batch: 8, micro_batch: 1, seq_len: 512}\n"
      "parallel:\n";
  models::expect_error(head + "  data_parallel: zero3\n  fsdp: {init: device}\n", "bad.yaml:7",
                       "parallel.fsdp.init", "this scenario's data_parallel is zero3");
  models::expect_error(head + "  data_parallel: fsdp\n  fsdp: {init: cpu}\n", "bad.yaml:7",
                       "parallel.fsdp.init", "sharded");
}

}  // namespace
}  // namespace clustersim::models
