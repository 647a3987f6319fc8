// Tensor parallelism (DESIGN.md "TP"; docs/parallelism.md "Tensor parallelism"): the Megatron
// collectives each layer issues, counted from the schedule's ops; the executed FLOPs of an
// iteration against Megatron-LM's closed form; the warning for a TP group that spans nodes.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <tuple>

#include "models/run_scenario.hpp"
#include "models/scenario.hpp"

namespace clustersim::models {
namespace {

using engine::Category;
using engine::CollectiveType;
using engine::OpKind;

// A GPT shape (MHA, GeLU MLP of 4h, layernorm, biases, learned positions), l = 8 blocks,
// h = 1024, a = 16, s = 512, V = 32768, micro-batch b = 2, bf16; on one DGX A100 with tp 2, pp 2,
// dp 2, global batch B = 16, so m = 16 / (2 · 2) = 4 micro-batches and 4 blocks per stage.
constexpr double kL = 8, kH = 1024, kS = 512, kV = 32768, kBatch = 16, kMicro = 2;
constexpr int kM = 4, kBlocksPerStage = 4;
constexpr double kActivation = kMicro * kS * kH * 2;  // b·s·h in bf16

std::string gpt(const std::string& extra_parallel = "", const std::string& recompute = "none") {
  return "name: gpt-tp\n"
         "cluster: {nodes: 1, node: dgx-a100}\n"
         "model: {num_layers: 8, hidden_size: 1024, num_heads: 16, vocab_size: 32768}\n"
         "training: {global_batch: 16, micro_batch: 2, seq_len: 512, precision: bf16, "
         "recompute: " +
         recompute +
         "}\n"
         "parallel: {tp: 2, pp: 2" +
         extra_parallel +
         "}\n"
         "simulation: {network_model: ideal}\n";
}

// TP collectives of one rank by type, with the set of sizes seen; also checks they run over a
// 2-rank group, on the compute stream (on the critical path) or, the backward's input-gradient
// reductions Megatron launches asynchronously (parallel.tp_async_grad_reduce), beside it.
struct TpOps {
  std::map<CollectiveType, int> count;
  std::map<CollectiveType, std::uint64_t> bytes;  // the size when every op of the type agrees
  bool uniform = true;
  int beside = 0;  // on the "tp overlap" stream
};

constexpr const char* kReplicatedGrads = "tp all_reduce replicated grads";

// The per-layer ones: the once-an-iteration all-reduce of the replicated tensors' gradients
// under sequence parallelism is left out (tested on its own).
TpOps tp_ops(const engine::Schedule& s, engine::Rank rank) {
  TpOps out;
  for (const auto& op : s.ops) {
    if (op.rank != rank || op.category != Category::tp_comm) continue;
    if (s.name_of(op) == kReplicatedGrads) continue;
    EXPECT_EQ(op.kind, OpKind::collective);
    const std::string& stream = s.stream_names[op.stream];
    EXPECT_TRUE(stream == "compute" || stream == "tp overlap") << stream;
    if (stream == "tp overlap") ++out.beside;
    EXPECT_EQ(s.groups[op.group_or_peer].ranks.size(), 2u);
    auto [it, fresh] = out.bytes.try_emplace(op.collective, op.bytes);
    if (!fresh && it->second != op.bytes) out.uniform = false;
    ++out.count[op.collective];
  }
  return out;
}

// Rank 0 holds stage 0: the embedding and blocks 0–3. Megatron (Shoeybi et al. 2019, Fig. 4):
// attention and MLP each end in a row-parallel linear whose output is all-reduced (g in forward),
// and each starts with a column-parallel linear whose input gradient is all-reduced (f in
// backward): two all-reduces of b·s·h per block in forward and two in backward. The
// vocabulary-parallel embedding all-reduces its output once per micro-batch in forward (its
// backward is the identity).
TEST(TensorParallel, TwoAllReducesPerLayerEachWay) {
  const auto built = build_schedule(parse_scenario(gpt(), "test"));
  const TpOps ops = tp_ops(built.schedule, 0);
  EXPECT_EQ(ops.count.at(CollectiveType::all_reduce), kM * (kBlocksPerStage * (2 + 2) + 1));
  EXPECT_EQ(ops.count.size(), 1u);  // nothing but all-reduces
  EXPECT_TRUE(ops.uniform);
  EXPECT_EQ(static_cast<double>(ops.bytes.at(CollectiveType::all_reduce)), kActivation);
  // The two in backward (f) run beside the weight gradients; stated off, on the compute stream.
  EXPECT_EQ(ops.beside, kM * kBlocksPerStage * 2);
  EXPECT_EQ(
      tp_ops(build_schedule(parse_scenario(gpt(", tp_async_grad_reduce: false"), "test")).schedule,
             0)
          .beside,
      0);
}

// Megatron's LinearWithGradAccumulationAndAsyncCommunication: a column-parallel linear's
// backward computes the data gradient, launches its TP all-reduce asynchronously and computes the
// weight gradient meanwhile. So in each block's attention and MLP backward the reduction starts
// when the data-gradient part ends, the weight-gradient part starts then too, beside it, and the
// block below starts its backward when both have ended.
TEST(TensorParallel, TheInputGradientsAllReduceRunsBesideTheWeightGradient) {
  std::string text = gpt();
  text.replace(text.find("ideal"), 5, "analytical");
  const RunOutput out = run_scenario(parse_scenario(text, "test"));
  const auto& s = out.built.schedule;
  const auto& t = out.timeline;
  int checked = 0;
  for (engine::OpId id = 0; id < s.ops.size(); ++id) {
    const auto& op = s.ops[id];
    if (op.rank != 0 || op.category != Category::tp_comm ||
        s.stream_names[op.stream] != "tp overlap")
      continue;
    const auto deps = s.dependencies(op);
    ASSERT_EQ(deps.size(), 1u);
    const engine::OpId dgrad = deps[0], wgrad = id + 1;
    ASSERT_EQ(s.name_of(s.ops[wgrad]), s.name_of(s.ops[dgrad]) + " wgrad");
    EXPECT_NEAR(t.start[id].seconds(), t.end[dgrad].seconds(), 1e-12);
    EXPECT_NEAR(t.start[wgrad].seconds(), t.end[dgrad].seconds(), 1e-12);
    EXPECT_GT(t.end[id].seconds(), t.start[id].seconds());  // the all-reduce takes time
    // The next compute op of rank 0 (the block below, or the embedding's backward) waits for both.
    engine::OpId next = wgrad + 1;
    while (next < s.ops.size() && (s.ops[next].rank != 0 || s.ops[next].kind != OpKind::compute))
      ++next;
    if (next < s.ops.size() && s.ops[next].category == Category::backward) {
      EXPECT_GE(t.start[next].seconds() + 1e-12,
                std::max(t.end[id].seconds(), t.end[wgrad].seconds()));
    }
    ++checked;
  }
  EXPECT_EQ(checked, kM * kBlocksPerStage * 2);
  // Off, the same plan is no faster.
  std::string off = text;
  off.replace(off.find("pp: 2"), 5, "pp: 2, tp_async_grad_reduce: false");
  EXPECT_GT(run_scenario(parse_scenario(off, "test")).result.iteration_time_s,
            out.result.iteration_time_s);
}

// With the reduction stated blocking, the re-gather is blocking too: the same bytes, each block's
// two re-gathers on the compute stream, nothing beside it.
TEST(TensorParallel, SequenceParallelWithBlockingReductionsReGathersOnTheComputeStream) {
  const auto built = build_schedule(
      parse_scenario(gpt(", sequence_parallel: true, tp_async_grad_reduce: false"), "test"));
  const TpOps ops = tp_ops(built.schedule, 0);
  const int pairs = kM * (kBlocksPerStage * (2 + 2) + 1);
  EXPECT_EQ(ops.count.at(CollectiveType::all_gather), pairs + kM * kBlocksPerStage * 2);
  EXPECT_EQ(ops.count.at(CollectiveType::reduce_scatter), pairs);
  EXPECT_EQ(ops.beside, 0);
  EXPECT_TRUE(ops.uniform);
}

// Under sequence parallelism Megatron's column-parallel backward (LinearWithGradAccumulation-
// AndAsyncCommunication) launches the all-gather of its input, computes the data gradient, waits
// for the gather, launches the reduce-scatter of the data gradient and computes the weight
// gradient from the gathered input. So the gather starts where the data-gradient GEMM starts,
// the reduce-scatter after both have ended, and the weight gradient after both too.
TEST(TensorParallel, SequenceParallelReGathersTheInputBesideTheDataGradient) {
  std::string text = gpt(", sequence_parallel: true");
  text.replace(text.find("ideal"), 5, "analytical");
  const RunOutput out = run_scenario(parse_scenario(text, "test"));
  const auto& s = out.built.schedule;
  const auto& t = out.timeline;
  const auto ends = [&](engine::OpId id) { return t.end[id].seconds(); };
  int checked = 0;
  for (engine::OpId id = 0; id < s.ops.size(); ++id) {
    const auto& op = s.ops[id];
    if (op.rank != 0 || !s.name_of(op).ends_with(" tp all_gather wgrad input")) continue;
    EXPECT_EQ(s.stream_names[op.stream], "tp overlap");
    EXPECT_EQ(op.bytes, static_cast<std::uint64_t>(kActivation));
    const engine::OpId dgrad = id + 1, reduce = id + 2, wgrad = id + 3;
    const std::string layer = s.name_of(op).substr(0, s.name_of(op).find(" tp all_gather"));
    ASSERT_EQ(s.name_of(s.ops[dgrad]), layer + " dgrad");
    ASSERT_EQ(s.ops[reduce].collective, CollectiveType::reduce_scatter);
    ASSERT_EQ(s.name_of(s.ops[wgrad]), layer + " wgrad");
    EXPECT_NEAR(t.start[id].seconds(), t.start[dgrad].seconds(), 1e-12);
    EXPECT_NEAR(t.start[reduce].seconds(), std::max(ends(id), ends(dgrad)), 1e-12);
    EXPECT_NEAR(t.start[wgrad].seconds(), std::max(ends(id), ends(dgrad)), 1e-12);
    ++checked;
  }
  EXPECT_EQ(checked, kM * kBlocksPerStage * 2);
}

// Full recompute re-runs each block's forward before its backward, collectives included: two
// more all-reduces per block (the embedding is not recomputed).
TEST(TensorParallel, FullRecomputeRepeatsTheForwardAllReduces) {
  const auto built = build_schedule(parse_scenario(gpt("", "full"), "test"));
  const TpOps ops = tp_ops(built.schedule, 0);
  EXPECT_EQ(ops.count.at(CollectiveType::all_reduce), kM * (kBlocksPerStage * (2 + 2 + 2) + 1));
  EXPECT_TRUE(ops.uniform);
  EXPECT_EQ(ops.beside, kM * kBlocksPerStage * 2);  // the recompute's stay on the compute stream
  EXPECT_EQ(static_cast<double>(ops.bytes.at(CollectiveType::all_reduce)), kActivation);
}

// Sequence parallelism (Korthikanti et al. 2022, §4.2.2) turns each all-reduce into an
// all-gather (g) and a reduce-scatter (ḡ) of the same b·s·h buffer: every all-reduce of the
// plain plan becomes one pair (the embedding's reduce-scatter in forward is paired by the
// all-gather of its output gradient in backward), and no all-reduce is left on stage 0.
TEST(TensorParallel, SequenceParallelMovesTheSameBytesAsPairs) {
  const auto built = build_schedule(parse_scenario(gpt(", sequence_parallel: true"), "test"));
  const TpOps ops = tp_ops(built.schedule, 0);
  const int pairs = kM * (kBlocksPerStage * (2 + 2) + 1);
  // Besides the pairs, each column-parallel linear's backward (QKV, FC1: two a block) all-gathers
  // its input again for the weight gradient, the forward having kept only this rank's share.
  const int regathers = kM * kBlocksPerStage * 2;
  EXPECT_EQ(ops.count.count(CollectiveType::all_reduce), 0u);
  EXPECT_EQ(ops.count.at(CollectiveType::all_gather), pairs + regathers);
  EXPECT_EQ(ops.count.at(CollectiveType::reduce_scatter), pairs);
  // Beside the compute stream: the backward's reduce-scatters and the re-gathers.
  EXPECT_EQ(ops.beside, kM * kBlocksPerStage * 2 + regathers);
  EXPECT_TRUE(ops.uniform);
  EXPECT_EQ(static_cast<double>(ops.bytes.at(CollectiveType::all_gather)), kActivation);
  EXPECT_EQ(static_cast<double>(ops.bytes.at(CollectiveType::reduce_scatter)), kActivation);
}

// The layernorms are whole on both TP ranks and, under sequence parallelism, each rank's
// gradient covers its own tokens: one all-reduce before the optimizer step sums them. Stage 0's
// blocks 0–3 hold 2 layernorms of weight and bias each, 4·h parameters a block, bf16 gradients:
// 4 · 4 · 1024 · 2 B = 32,768 B. Without sequence parallelism the gradients already agree.
TEST(TensorParallel, SequenceParallelAllReducesTheReplicatedNormsGradientsOnce) {
  for (const bool sp : {true, false}) {
    SCOPED_TRACE(sp ? "sequence parallel" : "plain");
    const auto built =
        build_schedule(parse_scenario(gpt(sp ? ", sequence_parallel: true" : ""), "test"));
    const engine::Schedule& s = built.schedule;
    int found = 0;
    for (const auto& op : s.ops)
      if (op.rank == 0 && s.name_of(op) == kReplicatedGrads) {
        ++found;
        EXPECT_EQ(op.collective, CollectiveType::all_reduce);
        EXPECT_EQ(op.bytes, static_cast<std::uint64_t>(kBlocksPerStage * 4 * kH * 2));
      }
    EXPECT_EQ(found, sp ? 1 : 0);
  }
}

// Megatron-LM's FLOPs per iteration (Narayanan et al. 2021, §5.1, Eq. 3): a block's forward is
// 24·B·s·h² + 4·B·s²·h, the logits 2·B·s·h·V, backward twice forward, so
//   no recompute:   72·B·s·l·h²·(1 + s/6h + V/12lh)
//   full recompute: 96·B·s·l·h²·(1 + s/6h + V/16lh)   (the blocks' forward once more)
// summed over every rank's forward, backward and recompute ops, whatever the split over tp, pp
// and dp (a folded run's simulated replica counts for each of its mirrors).
double executed_flops(const BuiltSchedule& built) {
  double sum = 0;
  for (const auto& op : built.schedule.ops)
    if (op.category == Category::forward || op.category == Category::backward ||
        op.category == Category::recompute)
      sum += built.schedule.flops(op);
  return sum * built.folded_replicas;
}

TEST(TensorParallel, ExecutedFlopsFollowMegatronsCount) {
  const double base = kBatch * kS * kL * kH * kH;
  const double plain = 72 * base * (1 + kS / (6 * kH) + kV / (12 * kL * kH));
  const double full = 96 * base * (1 + kS / (6 * kH) + kV / (16 * kL * kH));
  const auto none = run_scenario(parse_scenario(gpt(), "test"));
  EXPECT_NEAR(executed_flops(none.built), plain, 1e-9 * plain);
  const auto recomputed = run_scenario(parse_scenario(gpt("", "full"), "test"));
  EXPECT_NEAR(executed_flops(recomputed.built), full, 1e-9 * full);
  // What the result reports: tflops_per_gpu counts recompute, mfu does not.
  const Result& r = recomputed.result;
  const double gpu_seconds = r.iteration_time_s * r.world_size;
  EXPECT_NEAR(r.tflops_per_gpu * 1e12 * gpu_seconds, full, 1e-6 * full);
  EXPECT_NEAR(r.mfu * 312e12 * gpu_seconds, plain, 1e-6 * plain);  // A100 bf16 peak
}

// TP groups are consecutive ranks (tp varies fastest): tp 8 over nodes of 4 GPUs spans two nodes,
// and its per-layer all-reduces cross the NICs. tp 4 fits in a node.
TEST(TensorParallel, TpGroupAcrossNodesIsWarned) {
  auto text = [](int tp) {
    return "name: tp-nodes\n"
           "cluster: {nodes: 2, node: dgx-a100, gpus_per_node: 4}\n"
           "model: {num_layers: 2, hidden_size: 1024, num_heads: 16, vocab_size: 32768}\n"
           "training: {global_batch: 8, micro_batch: 1, seq_len: 512}\n"
           "parallel: {tp: " +
           std::to_string(tp) +
           "}\n"
           "simulation: {network_model: analytical}\n";
  };
  auto warned = [](const Result& r) {
    for (const auto& note : r.notes)
      if (note.find("parallel.tp") != std::string::npos && note.find("nodes") != std::string::npos)
        return true;
    return false;
  };
  EXPECT_TRUE(warned(run_scenario(parse_scenario(text(8), "test")).result));
  EXPECT_FALSE(warned(run_scenario(parse_scenario(text(4), "test")).result));
}

}  // namespace
}  // namespace clustersim::models
