// parallel.pp_scatter_gather (docs/parallelism.md "Point-to-point transfers"): Megatron-LM's
// scatter/gather of pipeline tensors (Narayanan et al. SC'21 §4.1): each TP rank sends 1/tp of
// the boundary tensor and the receiver all-gathers it over TP; moot under sequence parallelism,
// refused under DeepSpeed's engine.
#include <gtest/gtest.h>

#include <string>

#include "models/plans/training_schedule.hpp"
#include "models/scenario.hpp"
#include "tests/models/pipeline_scenarios.hpp"

namespace clustersim::models {
namespace {

using engine::OpKind;

// A GPT on one DGX A100: tp 2, pp 2, dp 2, micro-batch 2 of 512 tokens, hidden 1024, bf16: the
// boundary tensor is 2 · 512 · 1024 · 2 B = 2 MiB; m = 8 / (2 · 2) = 2 micro-batches, so each
// of the 8 ranks receives twice (stage 1 the activations, stage 0 the gradients).
std::string gpt(const std::string& parallel_extra) {
  return "name: sg\n"
         "cluster: {nodes: 1, node: dgx-a100}\n"
         "model: {num_layers: 4, hidden_size: 1024, num_heads: 16, vocab_size: 32768}\n"
         "training: {global_batch: 8, micro_batch: 2, seq_len: 512, precision: bf16}\n"
         "parallel: {tp: 2, pp: 2" +
         parallel_extra +
         "}\n"
         "simulation: {network_model: ideal}\n";
}
constexpr std::uint64_t kBoundary = 2ull * 512 * 1024 * 2;

struct Counts {
  int transfers = 0, gathers = 0;
  std::uint64_t transfer_bytes = 0;  // of each
  bool every_recv_gathered = true;
};
Counts count(const std::string& parallel_extra) {
  const BuiltSchedule built = build_schedule(parse_scenario(gpt(parallel_extra), "sg.yaml"));
  const auto& s = built.schedule;
  Counts c;
  for (engine::OpId id = 0; id < s.ops.size(); ++id) {
    const auto& op = s.ops[id];
    if (op.kind == OpKind::send || op.kind == OpKind::recv) {
      ++c.transfers;
      if (c.transfer_bytes == 0) {
        c.transfer_bytes = op.bytes;
      } else {
        EXPECT_EQ(op.bytes, c.transfer_bytes);  // every send and receive alike
      }
    }
    const std::string& name = s.name_of(op);
    if (name != "gather act" && name != "gather grad") continue;
    ++c.gathers;
    EXPECT_EQ(op.kind, OpKind::collective);
    EXPECT_EQ(op.collective, engine::CollectiveType::all_gather);
    EXPECT_EQ(op.bytes, kBoundary);  // an all-gather's size is the gathered buffer
    EXPECT_EQ(s.groups[op.group_or_peer].ranks.size(), 2u);
    const auto deps = s.dependencies(op);
    if (deps.size() != 1 || s.ops[deps[0]].kind != OpKind::recv) c.every_recv_gathered = false;
  }
  return c;
}

TEST(PipelineScatterGather, EachRankSendsItsShareAndTheReceiverGathersIt) {
  const Counts off = count("");
  EXPECT_EQ(off.transfers, 32);  // 8 ranks × 2 receives, and as many sends
  EXPECT_EQ(off.transfer_bytes, kBoundary);
  EXPECT_EQ(off.gathers, 0);

  const Counts on = count(", pp_scatter_gather: true");
  EXPECT_EQ(on.transfers, 32);
  EXPECT_EQ(on.transfer_bytes, kBoundary / 2);
  EXPECT_EQ(on.gathers, 16);  // one after each receive
  EXPECT_TRUE(on.every_recv_gathered);

  // Under sequence parallelism the boundary tensor is already split: nothing to gather.
  const Counts sp = count(", sequence_parallel: true, pp_scatter_gather: true");
  EXPECT_EQ(sp.transfer_bytes, kBoundary / 2);
  EXPECT_EQ(sp.gathers, 0);
}

TEST(PipelineScatterGather, DeepSpeedsEngineRefusesIt) {
  expect_plan_error(gpt(", pipeline_engine: deepspeed, pp_scatter_gather: true"), "ds.yaml",
                    "parallel.pp_scatter_gather", "partitions its sends over TP itself");
}

}  // namespace
}  // namespace clustersim::models
