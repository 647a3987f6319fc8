// Context parallelism (docs/parallelism.md "Context parallelism"): the rank order tp-cp-dp, the
// K/V bytes each attention block exchanges, the share of FLOPs a rank runs, the p2p ring hidden
// behind the attention compute where the all-gather variant is exposed, and the scenario errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "models/run_scenario.hpp"
#include "models/scenario.hpp"

namespace clustersim::models {
namespace {

using engine::Category;
using engine::CollectiveType;
using engine::OpKind;

// A Llama shape: 4 blocks, h = 1024, 16 heads of d = 64, 4 KV heads (GQA), SwiGLU ffn 2816,
// RMSNorm, no bias, rotary; s = 4096, b = 1, global batch 4, bf16 flash attention; one DGX H100
// with tp 2 · cp 2 -> dp 2, so m = 4 / (1 · 2) = 2 micro-batches per rank.
constexpr int kLayers = 4, kMicrobatches = 2;
// K and V of the whole sequence for one TP rank's KV heads: b · s · (4 / 2) · 64 · 2 · 2 bytes.
constexpr std::uint64_t kKvBytes = 1ULL * 4096 * 2 * 64 * 2 * 2;

std::string llama(const std::string& parallel, const std::string& network = "analytical",
                  int global_batch = 4) {
  return "name: cp\n"
         "cluster: {nodes: 1, node: dgx-h100}\n"
         "model: {num_layers: 4, hidden_size: 1024, num_heads: 16, num_kv_heads: 4, "
         "ffn_hidden_size: 2816, vocab_size: 32000, activation: swiglu, norm: rmsnorm, "
         "bias: false, learned_positions: false}\n"
         "training: {global_batch: " +
         std::to_string(global_batch) +
         ", micro_batch: 1, seq_len: 4096, precision: bf16, attention: flash}\n"
         "parallel: {" +
         parallel +
         "}\n"
         "simulation: {network_model: " +
         network + "}\n";
}

std::vector<engine::OpId> ops_of(const engine::Schedule& s, engine::Rank rank, Category c) {
  std::vector<engine::OpId> out;
  for (engine::OpId id = 0; id < s.ops.size(); ++id)
    if (s.ops[id].rank == rank && s.ops[id].category == c) out.push_back(id);
  return out;
}

std::vector<engine::Rank> group_of(const engine::Schedule& s, engine::OpId id) {
  return s.groups[s.ops[id].group_or_peer].ranks;
}

// Megatron-Core's order tp-cp-dp: rank = tp + 2·cp + 4·dp. Rank 0's CP partner is rank 2, and
// its gradients are reduced with every rank holding the same TP shard: 0, 2, 4, 6.
TEST(ContextParallel, RanksOrderedTpCpDp) {
  const auto built = build_schedule(parse_scenario(llama("tp: 2, cp: 2"), "cp.yaml"));
  const auto& s = built.schedule;
  const auto cp = ops_of(s, 0, Category::cp_comm);
  ASSERT_FALSE(cp.empty());
  EXPECT_EQ(group_of(s, cp.front()), (std::vector<engine::Rank>{0, 2}));
  const auto dp = ops_of(s, 0, Category::dp_comm);
  ASSERT_FALSE(dp.empty());
  EXPECT_EQ(group_of(s, dp.front()), (std::vector<engine::Rank>{0, 2, 4, 6}));
  const auto tp = ops_of(s, 0, Category::tp_comm);
  ASSERT_FALSE(tp.empty());
  EXPECT_EQ(group_of(s, tp.front()), (std::vector<engine::Rank>{0, 1}));
}

// p2p: one ring exchange per attention block and micro-batch each way, on a stream of its own:
// K and V of the whole sequence forward, twice that backward (K, V and the dK, dV accumulators).
TEST(ContextParallel, RingExchangesKeysAndValuesOfTheWholeSequence) {
  const auto built = build_schedule(parse_scenario(llama("tp: 2, cp: 2"), "cp.yaml"));
  const auto& s = built.schedule;
  int forward = 0, backward = 0;
  for (engine::OpId id : ops_of(s, 0, Category::cp_comm)) {
    const auto& op = s.ops[id];
    EXPECT_EQ(op.kind, OpKind::collective);
    EXPECT_EQ(op.collective, CollectiveType::all_gather);
    EXPECT_EQ(op.algorithm, engine::Algorithm::ring);
    EXPECT_EQ(s.stream_names[op.stream], "cp kv");
    if (op.bytes == kKvBytes) ++forward;
    if (op.bytes == 2 * kKvBytes) ++backward;
  }
  EXPECT_EQ(forward, kLayers * kMicrobatches);
  EXPECT_EQ(backward, kLayers * kMicrobatches);
}

// all_gather: K and V gathered before the attention and their gradients reduce-scattered after
// its backward, on the compute stream.
TEST(ContextParallel, AllGatherVariantGathersAndReduceScatters) {
  const auto built =
      build_schedule(parse_scenario(llama("tp: 2, cp: 2, cp_comm: all_gather"), "cp.yaml"));
  const auto& s = built.schedule;
  int gathers = 0, scatters = 0;
  for (engine::OpId id : ops_of(s, 0, Category::cp_comm)) {
    const auto& op = s.ops[id];
    EXPECT_EQ(s.stream_names[op.stream], "compute");
    EXPECT_EQ(op.bytes, kKvBytes);
    gathers += op.collective == CollectiveType::all_gather;
    scatters += op.collective == CollectiveType::reduce_scatter;
  }
  EXPECT_EQ(gathers, 2 * kLayers * kMicrobatches);  // forward and backward
  EXPECT_EQ(scatters, kLayers * kMicrobatches);
}

double forward_flops(const engine::Schedule& s, engine::Rank rank) {
  double f = 0;
  for (engine::OpId id : ops_of(s, rank, Category::forward))
    f += s.flops(s.ops[id]);
  return f;
}

// Each CP rank holds half of every sequence and, with the 2·cp-chunk causal split, half of its
// attention: per micro-batch it runs exactly half the forward FLOPs of a rank without CP. Same
// micro-batch count both ways: dp 2 with cp 2, dp 4 with twice the global batch.
TEST(ContextParallel, EachRankRunsItsShareOfTheFlops) {
  const auto with = build_schedule(parse_scenario(llama("tp: 2, cp: 2"), "cp.yaml"));
  const auto without = build_schedule(parse_scenario(llama("tp: 2", "analytical", 8), "nocp.yaml"));
  EXPECT_NEAR(forward_flops(with.schedule, 0), forward_flops(without.schedule, 0) / 2,
              1e-9 * forward_flops(without.schedule, 0));
}

// The p2p exchange starts once the op before the attention block is done, runs beside the
// attention compute, and the op after the block waits for both; so what it adds to the rank's
// time is only how far it outlasts the compute. The all-gather variant adds all of it.
TEST(ContextParallel, RingHidesBehindTheAttentionWhereAllGatherDoesNot) {
  // DP reduces at the end (overlap: false), so nothing else is in flight beside the exchange.
  const auto ring = run_scenario(parse_scenario(llama("tp: 2, cp: 2, overlap: false"), "cp.yaml"));
  const auto& s = ring.built.schedule;
  const auto& tl = ring.timeline;
  double outlasts = 0;
  for (engine::OpId x : ops_of(s, 0, Category::cp_comm)) {
    // The attention block's compute is the next op of rank 0 on the compute stream.
    engine::OpId compute = x + 1;
    while (s.stream_names[s.ops[compute].stream] != "compute")
      ++compute;
    EXPECT_EQ(tl.launch[x], tl.start[compute]) << s.label(s.ops[x]);
    EXPECT_GT(tl.end[x], tl.start[x]);
    outlasts += std::max(0.0, (tl.end[x] - tl.end[compute]).seconds());
    // The next op on the compute stream starts after both.
    engine::OpId next = compute + 1;
    while (s.ops[next].rank == 0 && s.stream_names[s.ops[next].stream] != "compute")
      ++next;
    EXPECT_GE(tl.start[next], std::max(tl.end[x], tl.end[compute]));
  }
  EXPECT_NEAR(ring.result.breakdown_s.cp_comm, outlasts, 1e-9);

  const auto gathered = run_scenario(
      parse_scenario(llama("tp: 2, cp: 2, overlap: false, cp_comm: all_gather"), "cp.yaml"));
  double total = 0;
  for (engine::OpId x : ops_of(gathered.built.schedule, 0, Category::cp_comm))
    total += (gathered.timeline.end[x] - gathered.timeline.start[x]).seconds();
  EXPECT_GT(total, 0.0);
  EXPECT_NEAR(gathered.result.breakdown_s.cp_comm, total, 1e-9);
  EXPECT_LT(ring.result.iteration_time_s, gathered.result.iteration_time_s);
}

// Ulysses (cp_comm: a2a): per attention block and micro-batch, forward all-to-alls the rank's
// local Q, K and V, b·(s/cp)·(16 + 2·4)/tp heads of d = 64 in bf16 = 1·2048·12·64·2 bytes, then
// the output, 1·2048·8·64·2; backward the output's gradient first, then those of Q, K, V. All on
// the compute stream over the CP pair {0, 2}: exposed, so the breakdown's cp_comm is their sum.
TEST(ContextParallel, UlyssesAllToAllsTheLocalHeadsOnTheComputeStream) {
  const auto out =
      run_scenario(parse_scenario(llama("tp: 2, cp: 2, overlap: false, cp_comm: a2a"), "cp.yaml"));
  const auto& s = out.built.schedule;
  constexpr std::uint64_t kQkv = 1ULL * 2048 * 12 * 64 * 2, kOut = 1ULL * 2048 * 8 * 64 * 2;
  int forward = 0, backward = 0;
  double total = 0;
  for (engine::OpId id : ops_of(s, 0, Category::cp_comm)) {
    const auto& op = s.ops[id];
    EXPECT_EQ(op.collective, CollectiveType::all_to_all);
    EXPECT_EQ(group_of(s, id), (std::vector<engine::Rank>{0, 2}));
    EXPECT_EQ(s.stream_names[op.stream], "compute");
    const std::string name = s.name_of(op);
    const bool bwd = name.find(" bwd ") != std::string::npos;
    const bool in = name.ends_with(" in");
    EXPECT_EQ(op.bytes, (in != bwd) ? kQkv : kOut) << name;
    (bwd ? backward : forward) += 1;
    total += (out.timeline.end[id] - out.timeline.start[id]).seconds();
  }
  EXPECT_EQ(forward, 2 * kLayers * kMicrobatches);  // in and out per block and micro-batch
  EXPECT_EQ(backward, 2 * kLayers * kMicrobatches);
  EXPECT_NEAR(out.result.breakdown_s.cp_comm, total, 1e-9);
}

void expect_error(const std::string& text, const std::string& key, const std::string& fragment) {
  try {
    parse_scenario(text, "bad.yaml");
    ADD_FAILURE() << "accepted; expected an error on " << key;
  } catch (const ScenarioError& e) {
    const std::string message = e.what();
    EXPECT_TRUE(message.starts_with("bad.yaml:")) << message;
    EXPECT_NE(message.find(": " + key + ": "), std::string::npos) << message;
    EXPECT_NE(message.find(fragment), std::string::npos) << message;
  }
}

TEST(ContextParallel, ImpossiblePlansAreNamed) {
  expect_error(llama("tp: 2, cp: 3"), "parallel.cp", "does not divide the world size");
  // 4098 tokens do not split into 2 · cp = 4 chunks.
  std::string odd = llama("tp: 2, cp: 2");
  odd.replace(odd.find("seq_len: 4096"), 13, "seq_len: 4098");
  expect_error(odd, "training.seq_len", "2 · cp = 4");
  std::string standard = llama("tp: 2, cp: 2");
  standard.replace(standard.find("attention: flash"), 16, "attention: standard");
  expect_error(standard, "training.attention", "allowed: flash");
  // Ulysses splits each TP rank's 2 KV heads over cp 4: not possible.
  expect_error(llama("tp: 2, cp: 4, cp_comm: a2a"), "parallel.cp_comm",
               "tp · cp = 8 must divide num_heads = 16 and num_kv_heads = 4");
  expect_error(llama("tp: 2, cp: 2, cp_comm: ring"), "parallel.cp_comm", "p2p");
  expect_error(llama("tp: 2, cp: 2, order: [tp, cp, cp, dp, pp]"), "parallel.order[2]",
               "listed twice");
}

}  // namespace
}  // namespace clustersim::models
