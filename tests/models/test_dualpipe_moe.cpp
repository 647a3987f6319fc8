// DualPipe with MoE layers (DeepSeek-V3 §3.2.1, Figure 4; docs/dualpipe.md): in
// an F&B pair the two micro-batches' pieces alternate on the compute stream and each one's
// expert-parallel all-to-alls run on the "ep all_to_all" stream beside the other's compute.
// Figures against hand derivations: the all-to-all's closed form, the order of the pieces, the
// pair's length as the sum of its compute when every all-to-all is shorter than the piece it
// runs beside, the unpaired passes paying theirs, 1F1B paying all of them, the experts' weight
// gradients in W, and the activations of dense dualpipe's p + 1 rule.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "models/memory_model.hpp"
#include "models/plans/pipeline_order.hpp"
#include "models/run_scenario.hpp"
#include "models/scenario.hpp"

namespace clustersim::models {
namespace {

// 4 blocks (attention + MoE: 4 SwiGLU experts of ffn 2048, top-2, one shared expert), hidden
// 1024, 512 tokens a micro-batch; pp 2 × ep 2 (dp 2) on one node of 4 H100s behind an NVSwitch of
// 100 GB/s per direction and 1 us per link; 4 micro-batches (the least dualpipe takes at pp 2).
// The analytical network model: no contention, so an all-to-all lasts its closed form whatever
// else runs.
constexpr double kMoeDpSeq = 512, kMoeDpHidden = 1024, kMoeDpTopK = 2;

std::string moe_dualpipe_scenario(const std::string& schedule, int ep = 2) {
  return "name: moe-dualpipe\n"
         "cluster:\n"
         "  nodes: 1\n"
         "  gpus_per_node: 4\n"
         "  gpu: H100-SXM5-80GB\n"
         "  intra_node: {fabric: nvswitch, nvlink_bandwidth: 100GB/s, nvlink_latency: 1us}\n"
         "  network: {topology: single-switch}\n"
         "model: {num_layers: 4, hidden_size: 1024, num_heads: 8, ffn_hidden_size: 4096,\n"
         "        vocab_size: 32000, activation: swiglu, norm: rmsnorm, bias: false,\n"
         "        learned_positions: false,\n"
         "        moe: {num_experts: 4, top_k: 2, expert_ffn_hidden_size: 2048, shared_experts: "
         "1}}\n"
         "training: {global_batch: 8, micro_batch: 1, seq_len: 512, precision: bf16}\n"
         "parallel: {pp: 2, ep: " +
         std::to_string(ep) + ", schedule: " + schedule +
         "}\n"
         "simulation: {network_model: analytical, link_efficiency: {nvlink: 1}}\n";
}

// One all-to-all of the EP group (n = 2 ranks on one switch): S = T·k·h·2 bytes (512 tokens, top-2,
// bf16), one step of the route latency α = 2 × 1 us and S/n through each rank's link, twice:
// (n − 1)·(α + 2·S/(n·B)) (test_moe.cpp's closed form), B the slower of the 100 GB/s link and the
// send's channels.
double moe_dualpipe_all_to_all_s() {
  // NCCL sends the peer's S/2 = 1 MiB in 4 parts of 256 KiB (8 p2p channels for 2 ranks), each a
  // single chunk, so the fill doubles the bandwidth term (docs/network.md "All-to-all:
  // send/receive parts"); the 4 parts move at most 20.6 GB/s each (a p2p channel's rate,
  // docs/network.md "Sends: a channel's rate"), 82.4 GB/s, below the link: 2 us + 2 × 12.725 us.
  const double n = 2, alpha = 2e-6, link = 100e9, channels = 4, channel_rate = 20.6e9;
  const double bandwidth = std::min(link, channels * channel_rate);
  const double size = kMoeDpSeq * kMoeDpTopK * kMoeDpHidden * 2;
  return (n - 1) * (alpha + 2.0 * size / (n * bandwidth));
}

// Rank 0's ops on one stream, in the order the stream runs them (the order they were issued).
std::vector<engine::OpId> dualpipe_moe_rank0_stream(const engine::Schedule& s,
                                                    const std::string& stream) {
  std::vector<engine::OpId> out;
  for (engine::OpId i = 0; i < s.ops.size(); ++i)
    if (s.ops[i].rank == 0 && s.stream_names[s.ops[i].stream] == stream) out.push_back(i);
  return out;
}

// The labels of `count` ops of `ops` from the one labelled `first` on.
std::vector<std::string> dualpipe_moe_labels_from(const engine::Schedule& s,
                                                  const std::vector<engine::OpId>& ops,
                                                  const std::string& first, std::size_t count) {
  std::vector<std::string> out;
  for (std::size_t k = 0; k < ops.size(); ++k) {
    if (out.empty() && s.label(s.ops[ops[k]]) != first) continue;
    out.push_back(s.label(s.ops[ops[k]]));
    if (out.size() == count) break;
  }
  return out;
}

// Rank 0 (pp 2, its near direction the forward one) runs F0 F2, then F1 and B2, then the pair
// (F3, B0), then B3 and B1 (pipeline_dualpipe.cpp). At pp 2 both ranks are middle ranks, and
// dualpipe.py runs a middle rank's first steady chunk's two passes apart ("we don't overlap these
// two chunks"), so (F3, B0) is rank 0's one pair. Chunk 0 holds the embedding and blocks 0-1,
// chunk 1 blocks 2-3 and the LM head. In the pair the pieces alternate, each cut where an
// all-to-all starts, B's first (DeepSeek-V3's Figure 4): B's shared-expert backward of block 1
// (combine-grad in flight); F's attention and router of block 2 (dispatch in flight); B's experts
// (dispatch-grad in flight); F's experts (combine in flight); B's router and attention backward and
// the next shared expert; F's shared expert, next attention and router; and so on: per block F
// attention, B experts, F experts, B attention; B ends with the embedding, F with the LM head.
// Then B0's W: the weight gradients of each layer in B's order, an MoE block's as its shared
// experts', experts' and router's.
const std::vector<std::string> kPairComputeOrder = {
    "L1.mlp bwd shared experts mb0",
    "L2.attn fwd mb3",
    "L2.mlp fwd router mb3",
    "L1.mlp bwd experts mb0",
    "L2.mlp fwd experts mb3",
    "L1.mlp bwd router mb0",
    "L1.attn bwd mb0",
    "L0.mlp bwd shared experts mb0",
    "L2.mlp fwd shared experts mb3",
    "L3.attn fwd mb3",
    "L3.mlp fwd router mb3",
    "L0.mlp bwd experts mb0",
    "L3.mlp fwd experts mb3",
    "L0.mlp bwd router mb0",
    "L0.attn bwd mb0",
    "embedding bwd mb0",
    "L3.mlp fwd shared experts mb3",
    "lm_head fwd mb3",
};

// The pairs are the order's F&B pairs only (pipeline_dualpipe.cpp, phases 4 and 5): on rank 0
// of p = 4, m = 8 (test_dualpipe.cpp's step list "F0 F1 F2 F4 B4 W4 F5 F3 B5 W5 F6 B0 W0 B6 W6
// F7 B1 W1 ...") F3, F6 and F7, each followed by its backward; not F4, which a backward follows
// in phase 3 (a far B whose W is deferred, run alone as DualPipe's zero-bubble step does). On
// the middle rank 1 ("F0 F4 F1 F5 F2 B4 W4 F6 B0 W0 F3 ...") not F2, whose steady chunk
// dualpipe.py runs apart from B4.
TEST(DualPipeMoe, OnlyTheFAndBPairsArePaired) {
  std::string paired;
  const auto steps = dualpipe_order(0, 4, 8);
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (!steps[i].paired) continue;
    paired += "F" + std::to_string(steps[i].microbatch) + " ";
    ASSERT_LT(i + 1, steps.size());
    EXPECT_FALSE(steps[i + 1].forward);
    EXPECT_FALSE(steps[i + 1].weight);
  }
  EXPECT_EQ(paired, "F3 F6 F7 ");
  paired.clear();
  for (const PipelineStep& step : dualpipe_order(1, 4, 8))
    if (step.paired) paired += "F" + std::to_string(step.microbatch) + " ";
  EXPECT_EQ(paired, "F6 F3 F7 ");
}

TEST(DualPipeMoe, PairAlternatesThePassesAndRunsAllToAllsOnTheirOwnStream) {
  const auto built = build_schedule(parse_scenario(moe_dualpipe_scenario("dualpipe"), "test"));
  const engine::Schedule& s = built.schedule;
  std::vector<std::string> want = kPairComputeOrder;
  for (const char* w :
       {"L1.mlp bwd-w shared experts mb0", "L1.mlp bwd-w experts mb0", "L1.mlp bwd-w router mb0",
        "L1.attn bwd-w mb0", "L0.mlp bwd-w shared experts mb0", "L0.mlp bwd-w experts mb0",
        "L0.mlp bwd-w router mb0", "L0.attn bwd-w mb0", "embedding bwd-w mb0"})
    want.emplace_back(w);
  EXPECT_EQ(dualpipe_moe_labels_from(s, dualpipe_moe_rank0_stream(s, "compute"),
                                     "L1.mlp bwd shared experts mb0", want.size()),
            want);
  // The EP stream runs the two passes' all-to-alls in the order their pieces end.
  const std::vector<std::string> a2a = {
      "L1.mlp bwd ep combine-grad all_to_all mb0",  "L2.mlp fwd ep dispatch all_to_all mb3",
      "L1.mlp bwd ep dispatch-grad all_to_all mb0", "L2.mlp fwd ep combine all_to_all mb3",
      "L0.mlp bwd ep combine-grad all_to_all mb0",  "L3.mlp fwd ep dispatch all_to_all mb3",
      "L0.mlp bwd ep dispatch-grad all_to_all mb0", "L3.mlp fwd ep combine all_to_all mb3",
  };
  EXPECT_EQ(dualpipe_moe_labels_from(s, dualpipe_moe_rank0_stream(s, "ep all_to_all"), a2a.front(),
                                     a2a.size()),
            a2a);
  // A piece waits for its own pass's all-to-all: the experts for the dispatch.
  const auto find = [&](const std::string& label) {
    for (engine::OpId i = 0; i < s.ops.size(); ++i)
      if (s.ops[i].rank == 0 && s.label(s.ops[i]) == label) return i;
    ADD_FAILURE() << "no op " << label;
    return engine::OpId{0};
  };
  const engine::OpId dispatch = find("L2.mlp fwd ep dispatch all_to_all mb3");
  bool waits = false;
  for (const engine::OpId d : s.dependencies(s.ops[find("L2.mlp fwd experts mb3")]))
    waits = waits || d == dispatch;
  EXPECT_TRUE(waits);
  // Unpaired passes (the warm-up forward F0, and F1 of the chunk run apart) keep every
  // all-to-all on the compute stream.
  EXPECT_EQ(s.stream_names[s.ops[find("L0.mlp fwd ep dispatch all_to_all mb0")].stream], "compute");
  EXPECT_EQ(s.stream_names[s.ops[find("L0.mlp fwd ep dispatch all_to_all mb1")].stream], "compute");
}

// Every all-to-all lasts a = 12.486 us (closed form above). The pair's pieces (kPairComputeOrder
// cut after each op an all-to-all follows) are B1 F1 B2 F2 B3 F3 B4 F4 B5 F5, and the all-to-all
// after piece k runs beside piece k + 1 of the other micro-batch; each of those is longer than a
// (checked), so the compute stream never waits: the pair lasts the sum of its 18 compute ops,
// where the same passes one after the other would add its 8 all-to-alls (8a, ~100 us). The
// warm-up forward F0, unpaired, runs its two MoE blocks' 4 all-to-alls on the compute stream: it
// lasts its compute plus 4a.
TEST(DualPipeMoe, PairHidesEachAllToAllBehindTheOtherMicroBatch) {
  const auto out = run_scenario(parse_scenario(moe_dualpipe_scenario("dualpipe"), "test"));
  const engine::Schedule& s = out.built.schedule;
  const engine::Timeline& t = out.timeline;
  const double a = moe_dualpipe_all_to_all_s();
  const auto at = [&](const std::string& label) {
    for (engine::OpId i = 0; i < s.ops.size(); ++i)
      if (s.ops[i].rank == 0 && s.label(s.ops[i]) == label) return i;
    ADD_FAILURE() << "no op " << label;
    return engine::OpId{0};
  };
  const auto seconds = [&](engine::OpId id) { return (t.end[id] - t.start[id]).seconds(); };
  for (const engine::OpId id : dualpipe_moe_rank0_stream(s, "ep all_to_all"))
    EXPECT_NEAR((t.end[id] - t.launch[id]).seconds(), a, 1e-11) << s.label(s.ops[id]);
  // Pieces as [first, last) ranges of kPairComputeOrder: B1 [0, 1), F1 [1, 3), B2 [3, 4), ...
  const std::vector<std::size_t> cuts = {0, 1, 3, 4, 5, 8, 11, 12, 13, 16, 18};
  for (std::size_t k = 1; k + 2 < cuts.size(); ++k) {
    double piece = 0;
    for (std::size_t o = cuts[k]; o < cuts[k + 1]; ++o)
      piece += seconds(at(kPairComputeOrder[o]));
    EXPECT_GT(piece, a) << "piece " << k;
  }

  double compute = 0;
  for (const auto& label : kPairComputeOrder)
    compute += seconds(at(label));
  const double pair =
      (t.end[at("lm_head fwd mb3")] - t.start[at("L1.mlp bwd shared experts mb0")]).seconds();
  EXPECT_NEAR(pair, compute, 1e-11);

  double warmup = 0;
  int all_to_alls = 0;
  for (const engine::OpId id : dualpipe_moe_rank0_stream(s, "compute")) {
    const std::string label = s.label(s.ops[id]);
    if (!label.ends_with(" mb0") || s.ops[id].category == engine::Category::backward) continue;
    if (s.ops[id].kind == engine::OpKind::compute) warmup += seconds(id);
    if (s.ops[id].category == engine::Category::ep_comm) ++all_to_alls;
    if (label == "L1.mlp fwd shared experts mb0") break;
  }
  EXPECT_EQ(all_to_alls, 4);
  const double f0 =
      (t.end[at("L1.mlp fwd shared experts mb0")] - t.start[at("embedding fwd mb0")]).seconds();
  EXPECT_NEAR(f0, warmup + 4 * a, 1e-11);
}

// 1F1B runs every all-to-all on the compute stream: each rank's 4 micro-batches cross its 2 MoE
// blocks forward and backward, 2 all-to-alls each way: 4 · 2 · 4 = 32 exposed, 32a. Under dualpipe
// rank 0's one pair, (F3, B0), hides 8 of its 32: at most 24a exposed.
TEST(DualPipeMoe, ThePairHidesAQuarterOfTheAllToAllsOf1F1B) {
  const double a = moe_dualpipe_all_to_all_s();
  const Result one = run_scenario(parse_scenario(moe_dualpipe_scenario("1f1b"), "test")).result;
  EXPECT_NEAR(one.exposed_comm_s.ep, 32 * a, 1e-9);
  const Result dual =
      run_scenario(parse_scenario(moe_dualpipe_scenario("dualpipe"), "test")).result;
  EXPECT_GT(dual.exposed_comm_s.ep, 0.0);
  EXPECT_LE(dual.exposed_comm_s.ep, 24 * a + 1e-9);
}

// B and W of an MoE block: B computes the input gradients, W the weight gradients. The experts'
// backward is two GEMMs per weight matrix of the same size (dgrad and wgrad: the elementwise
// kernels have no FLOPs), so each pass does half of it, the forward's FLOPs: T·k copies (512
// tokens, top-2, imbalance 1) × 2·h·ffn·3 (SwiGLU) = 1024 × 2·1024·2048·3; 1F1B's whole backward
// does twice that.
TEST(DualPipeMoe, WeightGradientsOfTheExpertsRunInW) {
  const double forward = 512 * kMoeDpTopK * 2 * kMoeDpHidden * 2048 * 3;
  const auto flops = [](const engine::Schedule& s, const std::string& label) {
    for (const auto& op : s.ops)
      if (op.rank == 0 && s.label(op) == label) return s.flops(op);
    ADD_FAILURE() << "no op " << label;
    return 0.0;
  };
  const auto dual = build_schedule(parse_scenario(moe_dualpipe_scenario("dualpipe"), "test"));
  EXPECT_DOUBLE_EQ(flops(dual.schedule, "L3.mlp bwd experts mb2"), forward);
  EXPECT_DOUBLE_EQ(flops(dual.schedule, "L3.mlp bwd-w experts mb2"), forward);
  const auto one = build_schedule(parse_scenario(moe_dualpipe_scenario("1f1b"), "test"));
  EXPECT_DOUBLE_EQ(flops(one.schedule, "L0.mlp bwd experts mb0"), 2 * forward);
}

// With ep 1 there is no all-to-all and no EP stream: a pair is its forward, then its backward,
// as F1 and B2, run apart, are.
TEST(DualPipeMoe, WithoutExpertParallelismThePairRunsOneThenTheOther) {
  const auto built = build_schedule(parse_scenario(moe_dualpipe_scenario("dualpipe", 1), "test"));
  const engine::Schedule& s = built.schedule;
  for (const auto& name : s.stream_names)
    EXPECT_NE(name, "ep all_to_all");
  // F1: the embedding, then per block attention, router, experts, shared expert (9 ops); then B2.
  const auto order =
      dualpipe_moe_labels_from(s, dualpipe_moe_rank0_stream(s, "compute"), "embedding fwd mb1", 10);
  ASSERT_EQ(order.size(), 10u);
  EXPECT_EQ(order[8], "L1.mlp fwd shared experts mb1");
  EXPECT_EQ(order[9], "lm_head bwd mb2");
}

// Activations: the order is dense dualpipe's, so each rank holds p + 1 = 3 micro-batches at its
// peak: rank 0 after F0 F2 F1 holds two of chunk 0 (stage 0's layers) and one of chunk 1 (stage
// 1's), as rank 1 holds two of its near chunk (stage 0's layers) and one of stage 1's. 1F1B's
// stage 0 holds 2 of stage 0's, its stage 1 one of stage 1's: dualpipe's peak on each rank is
// their sum.
TEST(DualPipeMoe, ActivationsFollowThePPlusOneRule) {
  for (int rank = 0; rank < 2; ++rank)
    EXPECT_EQ(peak_in_flight(dualpipe_order(rank, 2, 4)), 3);
  const MemoryEstimate dual =
      estimate_memory_only(parse_scenario(moe_dualpipe_scenario("dualpipe"), "test"));
  const MemoryEstimate one =
      estimate_memory_only(parse_scenario(moe_dualpipe_scenario("1f1b"), "test"));
  ASSERT_EQ(one.per_stage_saved_activations.size(), 2u);
  ASSERT_EQ(dual.per_stage_saved_activations.size(), 2u);
  const double both = one.per_stage_saved_activations[0] + one.per_stage_saved_activations[1];
  for (double held : dual.per_stage_saved_activations)
    EXPECT_NEAR(held, both, 1.0);
}

}  // namespace
}  // namespace clustersim::models
