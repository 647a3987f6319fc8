// Zero-bubble schedules with sharded parameters (docs/parallelism.md "Zero bubble"): FSDP / ZeRO-3
// gathers a unit before its B, and reduce-scatters its gradients (resharding it) only after its W,
// the op that makes its weight gradients; HSDP's replica all-reduce follows the reduce-scatter.
#include <gtest/gtest.h>

#include <string>

#include "models/memory_model.hpp"
#include "models/run_scenario.hpp"
#include "models/scenario.hpp"

namespace clustersim::models {
namespace {

using engine::Category;
using engine::CollectiveType;

// A Llama shape: 4 blocks, h = 1024, 16 heads, 4 KV heads, SwiGLU ffn 2816; s = 2048, micro-batch
// 1, 8 micro-batches; one DGX H100: pp 2 · dp 4, FSDP units of one block.
std::string llama(const std::string& parallel, const std::string& network = "analytical",
                  int layers = 4) {
  return "name: zb-fsdp\n"
         "cluster: {nodes: 1, node: dgx-h100}\n"
         "model: {num_layers: " +
         std::to_string(layers) +
         ", hidden_size: 1024, num_heads: 16, num_kv_heads: 4, "
         "ffn_hidden_size: 2816, vocab_size: 32000, activation: swiglu, norm: rmsnorm, "
         "bias: false, learned_positions: false}\n"
         "training: {global_batch: 32, micro_batch: 1, seq_len: 2048, precision: bf16}\n"
         "parallel: {" +
         parallel +
         "}\n"
         "simulation: {network_model: " +
         network + "}\n";
}

double backward_flops(const engine::Schedule& s) {
  double f = 0;
  for (const auto& op : s.ops)
    if (op.category == Category::backward) f += s.flops(op);
  return f;
}

// Every reduce-scatter of a unit's gradients waits for a W op (the unit's weight gradients), none
// for a B op; B + W keeps 1F1B's backward FLOPs.
TEST(ZeroBubbleFsdp, ReduceScattersWaitForTheWeightGradients) {
  const auto built = build_schedule(
      parse_scenario(llama("pp: 2, schedule: zb-h1, data_parallel: fsdp"), "t.yaml"));
  const auto& s = built.schedule;
  int reduce_scatters = 0;
  for (const auto& op : s.ops) {
    if (op.category != Category::dp_comm || op.collective != CollectiveType::reduce_scatter)
      continue;
    ++reduce_scatters;
    bool after_w = false;
    for (const engine::OpId d : s.dependencies(op)) {
      const std::string& name = s.name_of(s.ops[d]);
      if (s.ops[d].category == Category::backward) {
        EXPECT_NE(name.find("bwd-w"), std::string::npos) << s.name_of(op) << " after " << name;
        after_w = true;
      }
    }
    EXPECT_TRUE(after_w) << s.name_of(op);
  }
  // 8 micro-batches × (2 block units + the root unit) on each of the 8 ranks.
  EXPECT_EQ(reduce_scatters, 8 * 3 * 8);
  const auto one =
      build_schedule(parse_scenario(llama("pp: 2, data_parallel: fsdp"), "t.yaml")).schedule;
  EXPECT_NEAR(backward_flops(s), backward_flops(one), 1e-9 * backward_flops(s));
}

// B computes with the unit's parameters: each block's first B op (its MLP's, backward runs the
// block in reverse) waits for the unit's backward all-gather, or for one of the forward's when
// that one is still gathered.
TEST(ZeroBubbleFsdp, BWaitsForTheUnitsGather) {
  const auto built = build_schedule(
      parse_scenario(llama("pp: 2, schedule: zb-h1, data_parallel: fsdp"), "t.yaml"));
  const auto& s = built.schedule;
  int checked = 0;
  for (engine::OpId id = 0; id < s.ops.size(); ++id) {
    const auto& op = s.ops[id];
    if (op.rank != 0 || s.label(op).find(".mlp bwd mb") == std::string::npos) continue;
    bool gathered = false;
    for (const engine::OpId d : s.dependencies(op))
      gathered |= s.ops[d].category == Category::dp_comm &&
                  s.ops[d].collective == CollectiveType::all_gather;
    EXPECT_TRUE(gathered) << s.label(op);
    ++checked;
  }
  EXPECT_EQ(checked, 2 * 8);  // rank 0 (stage 0): 2 blocks, 8 micro-batches
}

// With free communication W fills what 1F1B leaves idle, as with unsharded parameters.
TEST(ZeroBubbleFsdp, H1IdlesLessThanOneFOneB) {
  for (const char* dp : {"fsdp", "zero3"}) {
    const std::string plan = std::string("pp: 2, data_parallel: ") + dp;
    const auto zb =
        run_scenario(parse_scenario(llama(plan + ", schedule: zb-h1", "ideal"), "t.yaml")).result;
    const auto one = run_scenario(parse_scenario(llama(plan, "ideal"), "t.yaml")).result;
    EXPECT_LT(zb.breakdown_s.idle, one.breakdown_s.idle) << dp;
    EXPECT_LE(zb.iteration_time_s, one.iteration_time_s * (1 + 1e-12)) << dp;
  }
}

// Memory: a unit gathered for its B stays gathered until its W, so by the end of a B pass the
// stage holds all its layers' parameters unsharded, as without resharding after forward: the
// gathered-unit buffers equal the stage's local parameters in bf16 (2 bytes each), where 1F1B
// holds the unit computing, the prefetched one and the root unit only (16 blocks: 8 a stage).
TEST(ZeroBubbleFsdp, UnitsStayGatheredFromBToW) {
  auto memory = [](const std::string& plan) {
    return estimate_memory_only(parse_scenario(llama(plan, "analytical", 16), "t.yaml"));
  };
  const auto zb = memory("pp: 2, schedule: zb-h1, data_parallel: fsdp");
  const auto kept = memory("pp: 2, data_parallel: fsdp, fsdp: {reshard_after_forward: false}");
  const auto one = memory("pp: 2, data_parallel: fsdp");
  for (std::size_t stage = 0; stage < 2; ++stage) {
    EXPECT_DOUBLE_EQ(zb.per_stage[stage].buffers, kept.per_stage[stage].buffers);
    EXPECT_GT(zb.per_stage[stage].buffers, one.per_stage[stage].buffers);
  }
}

// DualPipe keeps unsharded parameters only.
TEST(ZeroBubbleFsdp, DualPipeStillRefusesShardedParameters) {
  EXPECT_THROW(parse_scenario(llama("pp: 2, schedule: dualpipe, data_parallel: fsdp"), "t.yaml"),
               ScenarioError);
  EXPECT_NO_THROW(parse_scenario(llama("pp: 2, schedule: zb-h2, data_parallel: zero3"), "t.yaml"));
}

}  // namespace
}  // namespace clustersim::models
