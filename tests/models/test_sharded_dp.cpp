// Sharded data parallelism (ZeRO-1/2/3, FSDP, HSDP) against hand-derived communication volumes,
// timelines and group placements. Formulas: docs/parallelism.md.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "models/plans/training_schedule.hpp"
#include "models/run_scenario.hpp"
#include "models/scenario.hpp"

namespace clustersim::models {
namespace {

using engine::CollectiveType;
using engine::OpKind;

// A 4-block Llama-style transformer (MHA, SwiGLU, RMSNorm, no biases, untied head).
constexpr double kV = 32000, kH = 1024, kF = 2816, kL = 4;

// One copy of the gradients in bf16, from the shape alone: embedding V·h, per block attention
// (norm h + QKV 3h² + output h²) and MLP (norm h + gate/up/down 3·h·f), final norm h + head V·h.
constexpr double kGradientBytes =
    2.0 * (2 * kV * kH + kL * (kH + 4 * kH * kH + kH + 3 * kH * kF) + kH);

std::string scenario(const std::string& parallel, int nodes = 1, long global_batch = 8) {
  return "name: sharded-test\n"
         "cluster: {nodes: " +
         std::to_string(nodes) +
         ", node: dgx-a100}\n"
         "model: {num_layers: 4, hidden_size: 1024, num_heads: 16, ffn_hidden_size: 2816,\n"
         "        vocab_size: 32000, activation: swiglu, norm: rmsnorm, bias: false,\n"
         "        learned_positions: false}\n"
         "training: {global_batch: " +
         std::to_string(global_batch) +
         ", micro_batch: 1, seq_len: 1024, precision: bf16}\n"
         "parallel: " +
         parallel + "\n";
}

Scenario parse(const std::string& parallel, int nodes = 1, long global_batch = 8) {
  return parse_scenario(scenario(parallel, nodes, global_batch), "test");
}

// Bytes rank `rank` sends over a ring per iteration: all-reduce 2(N−1)/N·S, all-gather and
// reduce-scatter (N−1)/N·S, with S the op's buffer (collectives.hpp's convention).
double ring_bytes_sent(const engine::Schedule& s, engine::Rank rank) {
  double sum = 0;
  for (const auto& op : s.ops) {
    if (op.rank != rank || op.kind != OpKind::collective) continue;
    const double n = static_cast<double>(s.groups[op.group_or_peer].ranks.size());
    const double factor =
        op.collective == CollectiveType::all_reduce ? 2 * (n - 1) / n : (n - 1) / n;
    sum += factor * static_cast<double>(op.bytes);
  }
  return sum;
}

int count(const engine::Schedule& s, engine::Rank rank, CollectiveType type) {
  int c = 0;
  for (const auto& op : s.ops)
    c += op.rank == rank && op.kind == OpKind::collective && op.collective == type;
  return c;
}

// The op of `rank` whose label (name and micro-batch) is `label`.
engine::OpId find(const engine::Schedule& s, engine::Rank rank, const std::string& label) {
  for (engine::OpId i = 0; i < s.ops.size(); ++i)
    if (s.ops[i].rank == rank && s.label(s.ops[i]) == label) return i;
  throw std::runtime_error("no op '" + label + "' on rank " + std::to_string(rank));
}

constexpr double kN = 8;  // one DGX A100: dp = 8

TEST(ShardedDp, DdpSendsTwiceTheGradientsOverARing) {
  const auto built = build_schedule(parse("{data_parallel: ddp}"));
  EXPECT_NEAR(ring_bytes_sent(built.schedule, 0), 2 * (kN - 1) / kN * kGradientBytes, 1.0);
}

// ZeRO-3 / FSDP with one micro-batch: every unit is all-gathered before its forward and again
// before its backward, and its gradients reduce-scattered once: 3·(N−1)/N·G.
TEST(ShardedDp, FullShardSendsThreeTimesTheGradients) {
  for (const char* mode : {"fsdp", "zero3"}) {
    const auto built = build_schedule(parse(std::string("{data_parallel: ") + mode + "}"));
    EXPECT_NEAR(ring_bytes_sent(built.schedule, 0), 3 * (kN - 1) / kN * kGradientBytes, 1.0)
        << mode;
    EXPECT_EQ(count(built.schedule, 0, CollectiveType::all_reduce), 0) << mode;
    // Units: embedding, four blocks, LM head; two all-gathers and one reduce-scatter each.
    EXPECT_EQ(count(built.schedule, 0, CollectiveType::all_gather), 12) << mode;
    EXPECT_EQ(count(built.schedule, 0, CollectiveType::reduce_scatter), 6) << mode;
  }
}

// SHARD_GRAD_OP keeps the parameters from forward to backward: one all-gather per unit.
TEST(ShardedDp, ShardGradOpGathersOncePerMicroBatch) {
  const auto built =
      build_schedule(parse("{data_parallel: fsdp, fsdp: {reshard_after_forward: false}}"));
  EXPECT_NEAR(ring_bytes_sent(built.schedule, 0), 2 * (kN - 1) / kN * kGradientBytes, 1.0);
}

// Two blocks per unit: embedding, {L0, L1}, {L2, L3}, head = 4 units.
TEST(ShardedDp, UnitBlocksGroupBlocks) {
  const auto built = build_schedule(parse("{data_parallel: fsdp, fsdp: {unit: 2}}"));
  EXPECT_EQ(count(built.schedule, 0, CollectiveType::reduce_scatter), 4);
  EXPECT_NEAR(ring_bytes_sent(built.schedule, 0), 3 * (kN - 1) / kN * kGradientBytes, 1.0);
}

// With gradient accumulation (4 micro-batches): gathers every micro-batch (8 per unit); by
// default (FSDP2, ZeRO-3) a reduce-scatter per unit and micro-batch, 4·(N−1)/N·G more bytes
// sent than one; under no_sync one per unit at the last micro-batch.
TEST(ShardedDp, GradientAccumulationReducesEveryMicroBatchUnlessNoSync) {
  const auto every = build_schedule(parse("{data_parallel: fsdp}", 1, 32));
  EXPECT_EQ(count(every.schedule, 0, CollectiveType::all_gather), 6 * 2 * 4);
  EXPECT_EQ(count(every.schedule, 0, CollectiveType::reduce_scatter), 6 * 4);
  const auto no_sync = build_schedule(parse("{data_parallel: fsdp, fsdp: {no_sync: true}}", 1, 32));
  EXPECT_EQ(count(no_sync.schedule, 0, CollectiveType::all_gather), 6 * 2 * 4);
  EXPECT_EQ(count(no_sync.schedule, 0, CollectiveType::reduce_scatter), 6);
  for (const auto& op : no_sync.schedule.ops) {
    if (op.rank == 0 && op.kind == OpKind::collective &&
        op.collective == CollectiveType::reduce_scatter) {
      EXPECT_EQ(op.microbatch(), 3u);
    }
  }
  EXPECT_NEAR(ring_bytes_sent(every.schedule, 0) - ring_bytes_sent(no_sync.schedule, 0),
              3 * (kN - 1) / kN * kGradientBytes, 1.0);
  // DeepSpeed refuses no_sync under ZeRO-3.
  EXPECT_THROW(parse("{data_parallel: zero3, fsdp: {no_sync: true}}", 1, 32), ScenarioError);
}

// 4 micro-batches of 6 units: SHARD_GRAD_OP gathers once per unit and micro-batch (24); kept
// gathered across micro-batches as well (reshard_after_backward: false, FSDP2 under
// torch.distributed.pipelining), once per unit and step (6): one all-gather of the parameters
// and a reduce-scatter per micro-batch, (1 + 4)·(N−1)/N·G in all.
TEST(ShardedDp, KeptAcrossMicroBatchesGathersOncePerStep) {
  const auto per_microbatch =
      build_schedule(parse("{data_parallel: fsdp, fsdp: {reshard_after_forward: false}}", 1, 32));
  EXPECT_EQ(count(per_microbatch.schedule, 0, CollectiveType::all_gather), 6 * 4);
  const auto kept = build_schedule(parse(
      "{data_parallel: fsdp, fsdp: {reshard_after_forward: false, reshard_after_backward: false}}",
      1, 32));
  EXPECT_EQ(count(kept.schedule, 0, CollectiveType::all_gather), 6);
  EXPECT_EQ(count(kept.schedule, 0, CollectiveType::reduce_scatter), 6 * 4);
  EXPECT_NEAR(ring_bytes_sent(kept.schedule, 0), 5 * (kN - 1) / kN * kGradientBytes, 1.0);
  EXPECT_THROW(parse("{data_parallel: fsdp, fsdp: {reshard_after_backward: false}}"),
               ScenarioError);
}

// ZeRO-1/2: reduce-scatter the gradients and all-gather the parameters instead of all-reduce;
// the same 2·(N−1)/N·G as DDP. ZeRO-2 reduces every micro-batch (DeepSpeed), ZeRO-1 once.
TEST(ShardedDp, ZeroOneAndTwoReduceScatterAndAllGather) {
  for (const char* mode : {"zero1", "zero2"}) {
    const auto built = build_schedule(parse(std::string("{data_parallel: ") + mode + "}"));
    const auto& s = built.schedule;
    EXPECT_EQ(count(s, 0, CollectiveType::all_reduce), 0) << mode;
    EXPECT_GT(count(s, 0, CollectiveType::reduce_scatter), 0) << mode;
    EXPECT_EQ(count(s, 0, CollectiveType::all_gather), 1) << mode;  // the updated parameters
    EXPECT_NEAR(ring_bytes_sent(s, 0), 2 * (kN - 1) / kN * kGradientBytes, 1.0) << mode;
  }
  const auto one = build_schedule(parse("{data_parallel: zero1}", 1, 32));
  const auto two = build_schedule(parse("{data_parallel: zero2}", 1, 32));
  EXPECT_EQ(count(two.schedule, 0, CollectiveType::reduce_scatter),
            4 * count(one.schedule, 0, CollectiveType::reduce_scatter));
}

// The optimizer steps 1/N of the parameters: 10 FLOPs per parameter (training_schedule.cpp).
TEST(ShardedDp, OptimizerStepsTheLocalShard) {
  const auto ddp = build_schedule(parse("{data_parallel: ddp}"));
  const auto fsdp = build_schedule(parse("{data_parallel: fsdp}"));
  const auto& a = ddp.schedule.ops[find(ddp.schedule, 0, "optimizer step")];
  const auto& b = fsdp.schedule.ops[find(fsdp.schedule, 0, "optimizer step")];
  EXPECT_NEAR(ddp.schedule.flops(a), 10 * kGradientBytes / 2, 1.0);
  EXPECT_NEAR(fsdp.schedule.flops(b), 10 * kGradientBytes / 2 / kN, 1.0);
}

// With tp 2 the shards are of the rank's TP part: dp = 4, each unit's all-gather moves the
// rank's part of the unit, half of it but the RMSNorm weights, which every TP rank holds whole
// (2 per block and the final one: N = (4 · 2 + 1) · h · 2 B), so the forward and backward
// all-gathers total 2 · ((G − N)/2 + N) = G + N.
TEST(ShardedDp, TensorParallelShardsAreShardedAgain) {
  const auto built =
      build_schedule(parse("{tp: 2, data_parallel: fsdp}", 1, 4));  // one micro-batch
  const auto& s = built.schedule;
  double gathered = 0;
  for (const auto& op : s.ops)
    if (op.rank == 0 && op.kind == OpKind::collective &&
        op.collective == CollectiveType::all_gather) {
      EXPECT_EQ(s.groups[op.group_or_peer].ranks, (std::vector<engine::Rank>{0, 2, 4, 6}));
      gathered += static_cast<double>(op.bytes);
    }
  constexpr double kNormBytes = (kL * 2 + 1) * kH * 2;
  EXPECT_NEAR(gathered, kGradientBytes + kNormBytes, 1.0);
}

// Backward prefetch (depth 1): unit U3's (block 2) all-gather is issued before unit U4's (block
// 3) backward compute starts, so it starts before that compute ends; without prefetch it waits
// for U4's backward to finish.
TEST(ShardedDp, PrefetchOverlapsTheNextUnitsAllGather) {
  for (int depth : {1, 0}) {
    const auto out = run_scenario(
        parse("{data_parallel: fsdp, fsdp: {prefetch: " + std::to_string(depth) + "}}"));
    const auto& s = out.built.schedule;
    const auto gather = find(s, 0, "fsdp U3 all_gather bwd mb0");
    const auto compute = find(s, 0, "L3.attn bwd mb0");  // the first layer of U4, its last op
    if (depth == 1)
      EXPECT_LT(out.timeline.start[gather], out.timeline.end[compute]);
    else
      EXPECT_GE(out.timeline.start[gather], out.timeline.end[compute]);
  }
  // Forward prefetch likewise: U2's all-gather before U1's (block 0) forward ends.
  for (bool on : {true, false}) {
    const auto out =
        run_scenario(parse(std::string("{data_parallel: fsdp, fsdp: {forward_prefetch: ") +
                           (on ? "true" : "false") + "}}"));
    const auto& s = out.built.schedule;
    const auto gather = find(s, 0, "fsdp U2 all_gather fwd mb0");
    const auto compute = find(s, 0, "L0.mlp fwd mb0");
    if (on)
      EXPECT_LT(out.timeline.start[gather], out.timeline.end[compute]);
    else
      EXPECT_GE(out.timeline.start[gather], out.timeline.end[compute]);
  }
}

// A pipeline step's first all-gather is issued as the rank reaches the step, not when its pipeline
// receive completes: the CPU runs ahead of a NCCL receive, which holds only the stream. On the
// second stage of a 2-stage pipeline the first block's all-gather (U3: after the embedding U0 and
// blocks U1, U2 of stage 0) has nothing before it, so it starts at 0 and ends before the first
// activation arrives from stage 0 (which must gather and run the embedding and two blocks first);
// the block's forward then waits only for the receive.
TEST(ShardedDp, AStepsAllGatherRunsWhileItsPipelineReceiveWaits) {
  const auto out =
      run_scenario(parse("{pp: 2, data_parallel: fsdp, fsdp: {reshard_after_forward: false}}"));
  const auto& s = out.built.schedule;
  int checked = 0;
  for (engine::Rank r = 0; r < s.num_ranks; ++r) {
    engine::OpId gather = engine::kNone, recv = engine::kNone;
    for (engine::OpId i = 0; i < s.ops.size(); ++i) {
      if (s.ops[i].rank != r) continue;
      const std::string label = s.label(s.ops[i]);
      if (label == "fsdp U3 all_gather fwd mb0") gather = i;
      if (recv == engine::kNone && s.ops[i].kind == OpKind::recv) recv = i;
    }
    if (gather == engine::kNone) continue;  // a first-stage rank
    ASSERT_NE(recv, engine::kNone) << "rank " << r;
    EXPECT_EQ(out.timeline.start[gather], engine::Time::zero()) << "rank " << r;
    EXPECT_LT(out.timeline.end[gather], out.timeline.end[recv]) << "rank " << r;
    ++checked;
  }
  EXPECT_EQ(checked, 4);  // dp 4 on the second stage
}

// The root unit (fsdp.root_unit): the embedding and the head (with the final norm) are one unit,
// gathered at the embedding's forward and kept until the embedding's backward: 1 + 2 × 4 = 9
// all-gathers and 5 reduce-scatters. Bytes sent: all-gathers of the root once and of the blocks
// twice, a reduce-scatter of everything: (N−1)/N · (3G − R), with R the root's bytes. Backward
// starts at the head, so the root prefetches the last block (U4); the root's reduce-scatter waits
// for the embedding's backward.
TEST(ShardedDp, RootUnitKeepsTheEmbeddingAndHeadGatheredThroughTheIteration) {
  constexpr double kRootBytes = 2.0 * (2 * kV * kH + kH);
  const auto out = run_scenario(parse("{data_parallel: fsdp, fsdp: {root_unit: true}}"));
  const auto& s = out.built.schedule;
  EXPECT_EQ(count(s, 0, CollectiveType::all_gather), 9);
  EXPECT_EQ(count(s, 0, CollectiveType::reduce_scatter), 5);
  EXPECT_NEAR(ring_bytes_sent(s, 0), (kN - 1) / kN * (3 * kGradientBytes - kRootBytes), 1.0);
  const auto prefetch = find(s, 0, "fsdp U4 all_gather bwd mb0");
  const auto head = find(s, 0, "lm_head bwd mb0");
  EXPECT_LT(out.timeline.start[prefetch], out.timeline.end[head]);
  const auto root_reduce = find(s, 0, "fsdp U0 reduce_scatter mb0");
  const auto embedding = find(s, 0, "embedding bwd mb0");
  EXPECT_GE(out.timeline.start[root_reduce], out.timeline.end[embedding]);
  // Memory buffers, 2 bytes per parameter: the root gathered throughout and two blocks in flight
  // (prefetch 1); in the backward of a block or the head, the head's gradient (V·h + h, the
  // final norm's too) waits next to one block's; at the embedding's backward the root's gradient
  // is there twice (the two pieces and the flat copy for the reduce-scatter).
  constexpr double kRootParams = kRootBytes / 2;
  constexpr double kBlockParams = kH + 4 * kH * kH + kH + 3 * kH * kF;
  const double gathered = 2 * (kRootParams + 2 * kBlockParams);
  const auto& memory = out.result.memory;
  ASSERT_EQ(memory.phase.rfind("backward of ", 0), 0u) << memory.phase;
  if (memory.phase.rfind("backward of embedding", 0) == 0)
    EXPECT_DOUBLE_EQ(memory.peak.buffers, gathered + 2 * (2 * kRootParams));
  else
    EXPECT_DOUBLE_EQ(memory.peak.buffers, gathered + 2 * (kV * kH + kH + kBlockParams));
  EXPECT_THROW(parse("{pp: 2, data_parallel: fsdp, fsdp: {root_unit: true}}"), ScenarioError);
}

// HSDP on two DGX nodes: shard inside a node (8 ranks), replicate across the two: the
// reduce-scatter's group stays on rank 0's node, the replica all-reduce crosses nodes.
TEST(ShardedDp, HsdpReducesInsideANodeAndAllReducesAcross) {
  const Scenario sc = parse("{data_parallel: hsdp}", 2, 16);
  const auto built = build_schedule(sc);
  const auto topo = build_topology(sc);
  const auto& s = built.schedule;
  int reduce_scatters = 0, all_reduces = 0;
  for (const auto& op : s.ops) {
    if (op.rank != 0 || op.kind != OpKind::collective) continue;
    std::set<int> nodes;
    for (auto r : s.groups[op.group_or_peer].ranks)
      nodes.insert(topo.node_of(r));
    if (op.collective == CollectiveType::reduce_scatter ||
        op.collective == CollectiveType::all_gather) {
      EXPECT_EQ(nodes, (std::set<int>{0})) << s.label(op);
      EXPECT_EQ(s.groups[op.group_or_peer].ranks.size(), 8u);
      reduce_scatters += op.collective == CollectiveType::reduce_scatter;
    } else if (op.collective == CollectiveType::all_reduce) {
      EXPECT_EQ(nodes, (std::set<int>{0, 1})) << s.label(op);
      EXPECT_EQ(s.groups[op.group_or_peer].ranks, (std::vector<engine::Rank>{0, 8}));
      ++all_reduces;
    }
  }
  EXPECT_EQ(reduce_scatters, 6);
  EXPECT_EQ(all_reduces, 6);
  // Per rank: 3·(8−1)/8·G inside the node, plus the all-reduce of a 1/8 shard over 2 replicas.
  EXPECT_NEAR(ring_bytes_sent(s, 0),
              3 * 7.0 / 8 * kGradientBytes + 2.0 * (2 - 1) / 2 * kGradientBytes / 8, 2.0);
}

TEST(ShardedDp, ShardGroupMustDivideDp) {
  EXPECT_THROW(build_schedule(parse("{data_parallel: hsdp, fsdp: {shard_group: 3}}", 2, 16)),
               ScenarioError);
}

}  // namespace
}  // namespace clustersim::models
