// Zero-bubble schedules with mixture-of-experts blocks (docs/parallelism.md "Zero bubble"): each
// MoE block's backward splits as DualPipe splits it (docs/dualpipe.md): B keeps the all-to-alls
// and the input-gradient GEMMs, W takes the router's, the experts' and the shared experts'
// weight-gradient GEMMs, and the split keeps the backward's FLOPs.
#include <gtest/gtest.h>

#include <string>

#include "models/run_scenario.hpp"
#include "models/scenario.hpp"
#include "moe_test_model.hpp"
#include "rank0_ops.hpp"

namespace clustersim::models {
namespace {

using engine::Category;
using engine::CollectiveType;

// 4 blocks (2 per stage at pp 2), h = 1024, 8 heads, 8 SwiGLU experts of ffn 2048, top-2, no
// imbalance; s = 1024, micro-batch 1, 4 micro-batches; one node of 8 GPUs: pp 2 · dp 4, ep 4.
constexpr double kH = 1024, kFe = 2048, kTopK = 2, kSeq = 1024;

Scenario parse(const std::string& schedule, const std::string& network = "analytical") {
  return parse_scenario(
      "name: zb-moe\n"
      "cluster: {nodes: 1, gpus_per_node: 8, gpu: H100-SXM5-80GB,\n"
      "          intra_node: {fabric: nvswitch, nvlink_bandwidth: 100GB/s}}\n" +
          small_moe_model(4) +
          "training: {global_batch: 16, micro_batch: 1, seq_len: 1024, precision: bf16}\n"
          "parallel: {pp: 2, ep: 4, schedule: " +
          schedule +
          "}\n"
          "simulation: {network_model: " +
          network + "}\n",
      "zb-moe.yaml");
}

// W of a block's experts is their weight-gradient GEMMs: dW = Xᵀ·dY for gate, up and down, 2·h·ffn
// FLOPs per routed copy each, over the rank's 1024 · 2 copies; the backward's FLOPs are the same
// under 1F1B and ZB-H1 (B + W = the whole backward).
TEST(ZeroBubbleMoe, ExpertWeightGradientsMoveToWAndKeepTheBackwardsFlops) {
  const auto zb = build_schedule(parse("zb-h1"));
  const auto& s = zb.schedule;
  const auto w = find_op(s, 0, "L0.mlp bwd-w experts mb0");
  EXPECT_DOUBLE_EQ(s.flops(s.ops[w]), kSeq * kTopK * 2 * kH * kFe * 3);
  EXPECT_EQ(s.ops[w].category, Category::backward);
  auto backward_flops = [](const engine::Schedule& sch) {
    double f = 0;
    for (const auto& op : sch.ops)
      if (op.category == Category::backward) f += sch.flops(op);
    return f;
  };
  const auto one = build_schedule(parse("1f1b"));
  EXPECT_NEAR(backward_flops(s), backward_flops(one.schedule), 1e-9 * backward_flops(s));
}

// The all-to-alls carry the input gradients back to their tokens' ranks, which the previous
// stage waits for: none of them waits for a W, and a block's experts' W runs only after the
// block's dispatch-grad all-to-all of that micro-batch has ended.
TEST(ZeroBubbleMoe, AllToAllsStayWithTheInputGradients) {
  const auto out = run_scenario(parse("zb-h1"));
  const auto& s = out.built.schedule;
  int all_to_alls = 0;
  for (const auto& op : s.ops) {
    if (op.category != Category::ep_comm || op.collective != CollectiveType::all_to_all) continue;
    ++all_to_alls;
    for (const engine::OpId d : s.dependencies(op))
      EXPECT_EQ(s.name_of(s.ops[d]).find("bwd-w"), std::string::npos) << s.name_of(op);
  }
  EXPECT_GT(all_to_alls, 0);
  for (int mb = 0; mb < 4; ++mb) {
    const std::string m = " mb" + std::to_string(mb);
    const auto dispatch_grad = find_op(s, 0, "L0.mlp bwd ep dispatch-grad all_to_all" + m);
    const auto w = find_op(s, 0, "L0.mlp bwd-w experts" + m);
    EXPECT_GE(out.timeline.launch[w].seconds(), out.timeline.end[dispatch_grad].seconds());
  }
}

// W fills what 1F1B leaves idle: with free communication the MoE pipeline idles less under ZB-H1
// and finishes no later.
TEST(ZeroBubbleMoe, H1IdlesLessThanOneFOneB) {
  const auto zb = run_scenario(parse("zb-h1", "ideal")).result;
  const auto one = run_scenario(parse("1f1b", "ideal")).result;
  EXPECT_LT(zb.breakdown_s.idle, one.breakdown_s.idle);
  EXPECT_LE(zb.iteration_time_s, one.iteration_time_s * (1 + 1e-12));
}

}  // namespace
}  // namespace clustersim::models
