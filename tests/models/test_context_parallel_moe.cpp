// Context parallelism with mixture-of-experts layers (docs/parallelism.md "Context
// parallelism"): ranks ordered tp-cp-ep-dp as Megatron-Core orders them, each rank routing the
// tokens of its own sequence share, expert weights reduced over the expert-dp group (cp × dp/ep),
// dense weights over cp × dp; and the summary naming each collective by what it carries.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "models/run_scenario.hpp"
#include "models/scenario.hpp"
#include "moe_test_model.hpp"
#include "rank0_ops.hpp"

namespace clustersim::models {
namespace {

using engine::Category;
using engine::CollectiveType;

// 2 blocks, h = 1024, 8 heads, 8 SwiGLU experts of ffn 2048, top-2, no imbalance; s = 1024,
// micro-batch 1; one node of 8 GPUs on an NVSwitch. cp 2 · ep 4: dp = 8 / 2 = 4 = ep, so
// dp / ep = 1, and rank = cp + 2·ep.
constexpr double kH = 1024, kFe = 2048, kE = 8, kTopK = 2, kSeq = 1024;

Scenario parse(const std::string& parallel, const std::string& training_extra = "") {
  return parse_scenario(
      "name: cp-moe\n"
      "cluster: {nodes: 1, gpus_per_node: 8, gpu: H100-SXM5-80GB,\n"
      "          intra_node: {fabric: nvswitch, nvlink_bandwidth: 100GB/s}}\n" +
          small_moe_model(2) +
          "training: {global_batch: 8, micro_batch: 1, seq_len: 1024, precision: bf16,\n"
          "           attention: flash" +
          training_extra +
          "}\n"
          "parallel: " +
          parallel + "\n",
      "cp-moe.yaml");
}

// Rank 0's EP peers differ in the ep coordinate only: 0, 2, 4, 6; its CP partner is rank 1.
// Each rank routes its own s / cp = 512 tokens: 512 · top-2 copies of h bf16 values.
TEST(ContextParallelMoe, EachRankRoutesItsSequenceShareOverTheEpGroup) {
  const auto built = build_schedule(parse("{cp: 2, ep: 4}"));
  const auto& s = built.schedule;
  const auto dispatch = find_op(s, 0, "L0.mlp fwd ep dispatch all_to_all mb0");
  EXPECT_EQ(group_ranks(s, dispatch), (std::vector<engine::Rank>{0, 2, 4, 6}));
  EXPECT_EQ(s.ops[dispatch].collective, CollectiveType::all_to_all);
  EXPECT_EQ(s.ops[dispatch].bytes, static_cast<std::uint64_t>(kSeq / 2 * kTopK * kH * 2));
  // Its experts (8 / ep = 2 on the rank) run the rank's 512 · 2 token copies, 2·h·ffn·3 each.
  const auto experts = find_op(s, 0, "L0.mlp fwd experts mb0");
  EXPECT_DOUBLE_EQ(s.flops(s.ops[experts]), kSeq / 2 * kTopK * 2 * kH * kFe * 3);
  // The attention's K/V ring runs over the CP pair.
  bool cp_ring = false;
  for (engine::OpId id = 0; id < s.ops.size(); ++id)
    if (s.ops[id].rank == 0 && s.ops[id].category == Category::cp_comm) {
      EXPECT_EQ(group_ranks(s, id), (std::vector<engine::Rank>{0, 1}));
      cp_ring = true;
    }
  EXPECT_TRUE(cp_ring);
}

// Gradients: the rank's two experts per block are replicated on the ranks of the same ep index,
// cp × dp/ep = 2 of them (0 and 1), and reduced there: 2 blocks × 2 experts × 3·h·ffn bf16
// values; the dense weights on all cp × dp = 8 ranks.
TEST(ContextParallelMoe, ExpertGradientsReduceOverCpTimesExpertDataParallel) {
  const auto built = build_schedule(parse("{cp: 2, ep: 4}"));
  const auto& s = built.schedule;
  double expert_bytes = 0;
  int dense = 0;
  for (const auto& op : s.ops) {
    if (op.rank != 0 || op.category != Category::dp_comm) continue;
    const auto& ranks = s.groups[op.group_or_peer].ranks;
    if (s.name_of(op).starts_with("ddp expert bucket")) {
      EXPECT_EQ(ranks, (std::vector<engine::Rank>{0, 1}));
      expert_bytes += static_cast<double>(op.bytes);
    } else {
      EXPECT_EQ(ranks.size(), 8u);
      ++dense;
    }
  }
  EXPECT_DOUBLE_EQ(expert_bytes, 2 * (kE / 4) * 3 * kH * kFe * 2);
  EXPECT_GT(dense, 0);
}

// Every activation a rank saves is per token of its own share (flash attention keeps its local
// Q, K, V, O and log-sum-exp; the MoE layer its routed copies), so cp 2 halves the activations
// of cp 1 at the same micro-batch (pipeline depth 1: one micro-batch in flight either way).
TEST(ContextParallelMoe, ContextParallelismHalvesEachRanksActivations) {
  const auto cp1 = run_scenario(parse("{ep: 4}"));
  const auto cp2 = run_scenario(parse("{cp: 2, ep: 4}"));
  const double a1 = cp1.result.memory.peak.activations;
  const double a2 = cp2.result.memory.peak.activations;
  ASSERT_GT(a1, 0);
  EXPECT_NEAR(a2, a1 / 2, a1 * 1e-9);
}

// Two plans with both: the scenario check still asks ep to divide dp (experts are carved out of
// data parallelism, not of cp).
TEST(ContextParallelMoe, EpMustStillDivideDataParallelism) {
  EXPECT_THROW(parse("{cp: 4, ep: 4}"), ScenarioError);  // dp = 2
  EXPECT_NO_THROW(parse("{cp: 4, ep: 2}"));
}

// With tp 1 and ep = dp the FSDP shard group has the EP group's ranks; the summary names its
// gathers by what they carry ("dp"), not by the group's first-asked name ("ep").
TEST(ContextParallelMoe, NotesNameACollectiveByWhatItCarries) {
  const auto out = run_scenario(parse("{ep: 8, data_parallel: fsdp}"));
  const auto& notes = out.result.notes;
  auto has = [&](const std::string& text) {
    return std::any_of(notes.begin(), notes.end(),
                       [&](const std::string& n) { return n.find(text) != std::string::npos; });
  };
  EXPECT_TRUE(has("dp all_gather of ")) << "no FSDP gather note";
  EXPECT_FALSE(has("ep all_gather of "));
  EXPECT_FALSE(has("ep reduce_scatter of "));
}

}  // namespace
}  // namespace clustersim::models
