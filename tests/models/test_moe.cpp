// Mixture-of-experts layers under expert parallelism against hand-derived token volumes, FLOPs,
// the direct all-to-all's closed form and group placement. Conventions: docs/parallelism.md.
#include <gtest/gtest.h>

#include <string>

#include "models/plans/expert_parallelism.hpp"
#include "models/plans/training_schedule.hpp"
#include "models/run_scenario.hpp"
#include "models/scenario.hpp"

namespace clustersim::models {
namespace {

using engine::Category;
using engine::CollectiveType;
using engine::OpKind;

// 2 blocks, hidden 1024, 8 SwiGLU experts of ffn 2048, top-2; one node of 8 GPUs joined by an
// NVSwitch of 100 GB/s per direction and 1 us per link.
constexpr double kH = 1024, kFe = 2048, kE = 8, kTopK = 2, kSeq = 512;

std::string scenario(const std::string& moe_extra, const std::string& parallel, int nodes = 1) {
  return "name: moe-test\n"
         "cluster:\n"
         "  nodes: " +
         std::to_string(nodes) +
         "\n"
         "  gpus_per_node: 8\n"
         "  gpu: H100-SXM5-80GB\n"
         "  intra_node: {fabric: nvswitch, nvlink_bandwidth: 100GB/s, nvlink_latency: 1us}\n"
         "  network: {topology: single-switch}\n"
         "model: {num_layers: 2, hidden_size: 1024, num_heads: 8, ffn_hidden_size: 4096,\n"
         "        vocab_size: 32000, activation: swiglu, norm: rmsnorm, bias: false,\n"
         "        learned_positions: false,\n"
         "        moe: {num_experts: 8, top_k: 2, expert_ffn_hidden_size: 2048" +
         moe_extra +
         "}}\n"
         "training: {global_batch: " +
         std::to_string(8 * nodes) +
         ", micro_batch: 1, seq_len: 512, precision: bf16}\n"
         "parallel: " +
         parallel +
         "\n"
         // The closed forms below use the nominal link bandwidth.
         "simulation: {link_efficiency: {nvlink: 1}}\n";
}

Scenario parse(const std::string& moe_extra, const std::string& parallel = "{ep: 8}",
               int nodes = 1) {
  return parse_scenario(scenario(moe_extra, parallel, nodes), "test");
}

engine::OpId find(const engine::Schedule& s, engine::Rank rank, const std::string& label) {
  for (engine::OpId i = 0; i < s.ops.size(); ++i)
    if (s.ops[i].rank == rank && s.label(s.ops[i]) == label) return i;
  throw std::runtime_error("no op '" + label + "' on rank " + std::to_string(rank));
}

// One micro-batch of 512 tokens, each sent to top-2 experts: 1024 token copies of h bf16 values.
TEST(Moe, DispatchMovesTokensTimesTopKTimesHidden) {
  const auto built = build_schedule(parse(""));
  const auto& s = built.schedule;
  const auto& op = s.ops[find(s, 0, "L0.mlp fwd ep dispatch all_to_all mb0")];
  EXPECT_EQ(op.bytes, static_cast<std::uint64_t>(kSeq * kTopK * kH * 2));
  EXPECT_EQ(op.collective, CollectiveType::all_to_all);
  EXPECT_EQ(op.category, Category::ep_comm);
  EXPECT_EQ(s.stream_names[op.stream], "compute");  // on the critical path
  EXPECT_EQ(s.groups[op.group_or_peer].ranks.size(), 8u);
  // Forward: dispatch and combine; backward: combine-grad and dispatch-grad, per MoE layer.
  int all_to_all = 0;
  for (const auto& o : s.ops)
    all_to_all +=
        o.rank == 0 && o.kind == OpKind::collective && o.collective == CollectiveType::all_to_all;
  EXPECT_EQ(all_to_all, 2 * 4);
  EXPECT_NO_THROW(find(s, 0, "L1.mlp bwd ep combine-grad all_to_all mb0"));
  EXPECT_NO_THROW(find(s, 0, "L1.mlp bwd ep dispatch-grad all_to_all mb0"));
}

// Capacity: the hottest expert is offered 3 × the mean but accepts 1.25 × (tokens beyond are
// dropped), so the pace-setting rank's volume is 1.25 × the balanced one.
TEST(Moe, CapacityCapsTheHottestRanksTokens) {
  const auto built = build_schedule(parse(", imbalance: 3, capacity_factor: 1.25"));
  const auto& op =
      built.schedule.ops[find(built.schedule, 0, "L0.mlp fwd ep dispatch all_to_all mb0")];
  EXPECT_EQ(op.bytes, static_cast<std::uint64_t>(1.25 * kSeq * kTopK * kH * 2));
}

// The rank's experts (one per rank at ep 8) process f × the mean T·k copies, each costing
// 2·h·ffn·3 FLOPs (SwiGLU: gate, up, down): doubling f doubles them.
TEST(Moe, DoublingImbalanceDoublesTheHottestExpertsCompute) {
  auto flops = [](const char* f) {
    const auto built = build_schedule(parse(std::string(", capacity_factor: 8, imbalance: ") + f));
    return built.schedule.flops(
        built.schedule.ops[find(built.schedule, 0, "L0.mlp fwd experts mb0")]);
  };
  EXPECT_DOUBLE_EQ(flops("1.5"), 1.5 * kSeq * kTopK * 2 * kH * kFe * 3);
  EXPECT_DOUBLE_EQ(flops("3"), 2 * flops("1.5"));
}

// A direct all-to-all of S bytes over n ranks on one switch: n−1 steps of the route latency
// α = 2 × 1 us (GPU → NVSwitch → GPU), and each rank pushes (n−1)·S/n through its 100 GB/s link:
// (n−1)·(α + S/(n·B)). NCCL sends each peer's S/n = 256 KiB as one part (nChannelsMin is 1: 8 p2p
// channels for 8 ranks) of one chunk (below its 512 KiB), so the chunk crosses the sender's and
// the receiver's stage in turn: the fill is the bandwidth term once more (docs/network.md
// "All-to-all: send/receive parts").
TEST(Moe, DispatchTakesTheDirectAllToAllClosedForm) {
  const auto out = run_scenario(parse(""));
  const auto& s = out.built.schedule;
  const auto id = find(s, 0, "L0.mlp fwd ep dispatch all_to_all mb0");
  const double n = 8, alpha = 2e-6, bandwidth = 100e9;
  const double size = kSeq * kTopK * kH * 2;
  const double expected = (n - 1) * (alpha + 2.0 * size / (n * bandwidth));
  const double got = (out.timeline.end[id] - out.timeline.launch[id]).seconds();
  EXPECT_NEAR(got, expected, 1e-9);
}

// Expert weights live on E/ep ranks and are reduced over the expert-dp group (ranks 0 and 8 on
// two nodes at ep 8); the dense weights over all 16.
TEST(Moe, ExpertGradientsReduceOverTheExpertDataParallelGroup) {
  const auto built = build_schedule(parse("", "{ep: 8}", 2));
  const auto& s = built.schedule;
  double expert_bytes = 0;
  int dense_buckets = 0;
  for (const auto& op : s.ops) {
    if (op.rank != 0 || op.category != Category::dp_comm) continue;
    const auto& ranks = s.groups[op.group_or_peer].ranks;
    if (s.name_of(op).starts_with("ddp expert bucket")) {
      EXPECT_EQ(ranks, (std::vector<engine::Rank>{0, 8}));
      expert_bytes += static_cast<double>(op.bytes);
    } else {
      EXPECT_EQ(ranks.size(), 16u);
      ++dense_buckets;
    }
  }
  // One expert (gate, up, down: 3·h·ffn) per rank in each of the 2 MoE layers, bf16.
  EXPECT_DOUBLE_EQ(expert_bytes, 2 * (kE / 8) * 3 * kH * kFe * 2);
  EXPECT_GT(dense_buckets, 0);
}

// Shared experts run on every rank as a dense MLP: T tokens × 2·h·ffn·3 per shared expert.
TEST(Moe, SharedExpertsRunDenseOnEveryRank) {
  const auto built = build_schedule(parse(", shared_experts: 2"));
  const auto& op = built.schedule.ops[find(built.schedule, 3, "L1.mlp fwd shared experts mb0")];
  EXPECT_DOUBLE_EQ(built.schedule.flops(op), 2 * kSeq * 2 * kH * kFe * 3);
}

// first_dense: block 0 keeps a dense MLP, so only block 1 routes.
TEST(Moe, FirstDenseBlocksDoNotRoute) {
  const auto built = build_schedule(parse(", first_dense: 1"));
  EXPECT_THROW(find(built.schedule, 0, "L0.mlp fwd ep dispatch all_to_all mb0"),
               std::runtime_error);
  EXPECT_NO_THROW(find(built.schedule, 0, "L1.mlp fwd ep dispatch all_to_all mb0"));
}

// EP with FSDP: routed experts are sharded over the expert-dp group, dense tensors over dp.
TEST(Moe, FsdpShardsExpertsOverTheExpertDataParallelGroup) {
  const auto built = build_schedule(parse("", "{ep: 8, data_parallel: fsdp}", 2));
  const auto& s = built.schedule;
  const auto& op = s.ops[find(s, 0, "fsdp U1 experts reduce_scatter mb0")];  // block 0
  EXPECT_EQ(s.groups[op.group_or_peer].ranks, (std::vector<engine::Rank>{0, 8}));
  EXPECT_EQ(op.bytes, static_cast<std::uint64_t>((kE / 8) * 3 * kH * kFe * 2));
}

// Model FLOPs (MFU) count the balanced model: top_k expert MLPs per token, whatever the imbalance
// or capacity (docs/parallelism.md "Mixture of experts"). Per token forward: Q, K, V and O
// 8·h², the attention core 4·s·h (Megatron's count, no causal halving), the router 2·h·E, two
// SwiGLU experts 2 · 6·h·fe, the logits 2·h·V; backward twice that; 8 sequences of 512 tokens.
// The simulation charges every rank the hottest rank's f × the mean (its pace), but the cluster
// executes T·top_k copies per rank in all: tflops_per_gpu counts that mean too.
double balanced_model_flops() {
  constexpr double kV = 32000, kTokens = 8 * kSeq, kLayers = 2;
  const double per_token =
      kLayers * (8 * kH * kH + 4 * kSeq * kH + 2 * kH * kE + kTopK * 6 * kH * kFe) + 2 * kH * kV;
  return 3 * per_token * kTokens;
}

constexpr double kPeak = 989e12, kWorld = 8;  // H100's dense bf16 peak; 8 GPUs

TEST(Moe, ImbalanceChangesTimeNotModelFlops) {
  for (const char* extra : {", imbalance: 1", ", imbalance: 2, capacity_factor: 4",
                            ", imbalance: 3, capacity_factor: 1.25"}) {
    SCOPED_TRACE(extra);
    const Result r = run_scenario(parse(extra)).result;
    const double gpu_seconds = kWorld * r.iteration_time_s;
    EXPECT_NEAR(r.mfu * kPeak * gpu_seconds / balanced_model_flops(), 1.0, 1e-9);
    // No recompute: the executed FLOPs are the model's.
    EXPECT_NEAR(r.tflops_per_gpu * 1e12 * gpu_seconds / balanced_model_flops(), 1.0, 1e-9);
  }
}

// The router's GEMM (2·h·E a token) counts once in the model FLOPs whatever tp: with sequence
// parallelism each TP rank routes its own b·s/tp tokens (Megatron-Core runs the router on the
// sequence-sharded input); without it every TP rank routes all b·s, duplicated work that, like
// latent attention's duplicated down-projections, the FLOPs count once (docs/parallelism.md).
TEST(Moe, RouterFlopsCountOnceOverTp) {
  for (const char* parallel : {"{tp: 2, ep: 4, sequence_parallel: true}", "{tp: 2, ep: 4}",
                               "{tp: 4, ep: 2, sequence_parallel: true}"}) {
    SCOPED_TRACE(parallel);
    const Result r = run_scenario(parse("", parallel)).result;
    const double gpu_seconds = kWorld * r.iteration_time_s;
    EXPECT_NEAR(r.mfu * kPeak * gpu_seconds / balanced_model_flops(), 1.0, 1e-9);
    EXPECT_NEAR(r.tflops_per_gpu * 1e12 * gpu_seconds / balanced_model_flops(), 1.0, 1e-9);
  }
}

}  // namespace
}  // namespace clustersim::models
