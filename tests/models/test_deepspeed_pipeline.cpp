// DeepSpeed's pipeline engine (`parallel.pipeline_engine: deepspeed`; docs/parallelism.md
// "DeepSpeed's pipeline engine"): the blocking, TP-partitioned sends of pipe/p2p.py in
// TrainSchedule's order, timed by hand on two stages; the gathers, the tied embedding's gradient
// all-reduce and BF16_Optimizer's all-reduce counted against the code; Megatron's tied all-reduce;
// where BF16_Optimizer's cast copy applies; the keys it refuses.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "models/run_scenario.hpp"
#include "models/scenario.hpp"
#include "tests/models/pipeline_scenarios.hpp"

namespace clustersim::models {
namespace {

using engine::OpKind;

// two_stage_pipeline (pipeline_scenarios.hpp): each transfer 12 us, a forward 10 us, a backward
// 20 us, two micro-batches.
constexpr double kStepUs = 1e-6;
constexpr double kTimeTol = 1e-9;  // the optimizer's sub-nanosecond step and ps rounding

// TrainSchedule (pipe/schedule.py) on stage 0: F0, send act0, F1, send act1, recv grad0, B0,
// recv grad1, B1; on stage 1: recv act0, F0, B0, recv act1, send grad0 (after the activation,
// TrainSchedule's order), F1, B1, send grad1 — every transfer blocking on the compute stream.
//   0–10    s0 F0                      10–22  act0 (s1 waits in its recv)
//   22–32   s0 F1, s1 F0; 32–52 s1 B0   52–64  act1 (s0's send waits for s1's recv)
//   64–76   grad0                      76–96  s0 B0; 76–86 s1 F1, 86–106 s1 B1
//   106–118 grad1 (s0 has waited since 96 in its recv)   118–138 s0 B1
TEST(DeepSpeedPipeline, BlockingSendsInTrainScheduleOrderTimeTwoStagesByHand) {
  const RunOutput out =
      run_scenario(parse_scenario(two_stage_pipeline("pipeline_engine: deepspeed"), "ds.yaml"));
  EXPECT_NEAR(out.result.iteration_time_s, 138 * kStepUs, kTimeTol);
  // Every transfer is on the compute stream, in the order above.
  const auto& s = out.built.schedule;
  std::map<engine::Rank, std::string> order;
  for (engine::OpId id = 0; id < s.ops.size(); ++id) {
    const auto& op = s.ops[id];
    if (op.kind != OpKind::send && op.kind != OpKind::recv &&
        op.category != engine::Category::forward && op.category != engine::Category::backward)
      continue;
    EXPECT_EQ(s.stream_names[op.stream], "compute");
    std::string what = op.kind == OpKind::send                    ? "S"
                       : op.kind == OpKind::recv                  ? "R"
                       : op.category == engine::Category::forward ? "F"
                                                                  : "B";
    order[op.rank] += what + std::to_string(op.microbatch()) + " ";
  }
  EXPECT_EQ(order[0], "F0 S0 F1 S1 R0 B0 R1 B1 ");
  EXPECT_EQ(order[1], "R0 F0 B0 R1 S0 F1 B1 S1 ");
  // The grad0 transfer: 64–76 us on both ends.
  for (engine::OpId id = 0; id < s.ops.size(); ++id)
    if (s.ops[id].kind == OpKind::recv && s.ops[id].rank == 0 && s.ops[id].microbatch() == 0) {
      EXPECT_NEAR(out.timeline.launch[id].seconds(), 64 * kStepUs, kTimeTol);
      EXPECT_NEAR(out.timeline.end[id].seconds(), 76 * kStepUs, kTimeTol);
    }
}

// The same pipeline under Megatron's schedule: test_pipeline_p2p_overlap.cpp.

// A GPT on one DGX A100 (pipeline_scenarios' shapes): tp 2, pp 2, dp 2, m = 16 / (2 · 2) = 4.
constexpr double kDsB = 2, kDsS = 512, kDsH = 1024, kDsV = 32768;
std::string ds_gpt(const std::string& parallel) {
  return "name: ds-gpt\n"
         "cluster: {nodes: 1, node: dgx-a100}\n"
         "model: {num_layers: 8, hidden_size: 1024, num_heads: 16, vocab_size: 32768,\n"
         "        tied_embeddings: true}\n"
         "training: {global_batch: 16, micro_batch: 2, seq_len: 512, precision: bf16}\n"
         "parallel: " +
         parallel +
         "\n"
         "simulation: {network_model: ideal}\n";
}

struct DsCounts {
  int sends = 0, gathers = 0, tied = 0;
  std::map<std::uint64_t, int> send_bytes, tied_bytes;
  std::map<std::string, int> dp_collectives;  // by collective type
  std::map<std::string, int> dp_streams;      // by stream name
};
DsCounts ds_counts(const engine::Schedule& s) {
  DsCounts c;
  for (const auto& op : s.ops) {
    const std::string& name = s.name_of(op);
    if (op.kind == OpKind::send) {
      ++c.sends;
      ++c.send_bytes[op.bytes];
    } else if (op.kind == OpKind::collective && op.category == engine::Category::pp_comm) {
      ++c.gathers;
    } else if (name.find("tied embedding") != std::string::npos) {
      ++c.tied;
      ++c.tied_bytes[op.bytes];
    } else if (op.kind == OpKind::collective && op.category == engine::Category::dp_comm) {
      ++c.dp_collectives[std::string(engine::kCollectiveTypeNames.name(op.collective))];
      ++c.dp_streams[s.stream_names[op.stream]];
    }
  }
  return c;
}

// PartitionedTensor: each TP rank sends 1/tp of b·s·h·2 bytes; the receiving stage gathers it
// (one all-gather per forward on stage 1), and stage 0 gathers its output and the gradient before
// each backward (two per backward). ReduceTiedGrads: each of the 8 ranks (stage 0 and the last
// stage) all-reduces vocab/tp · h bf16 gradients once.
TEST(DeepSpeedPipeline, SlicesAreSentGatheredAndTheTiedGradientsReduced) {
  const int m = 4, replicas = 4;  // tp · dp pipelines of 2 stages
  DsCounts c = ds_counts(
      build_schedule(parse_scenario(ds_gpt("{tp: 2, pp: 2, pipeline_engine: deepspeed}"), "t"))
          .schedule);
  EXPECT_EQ(c.sends, 2 * m * replicas);
  ASSERT_EQ(c.send_bytes.size(), 1u);
  EXPECT_EQ(static_cast<double>(c.send_bytes.begin()->first), kDsB * kDsS * kDsH * 2 / 2);
  EXPECT_EQ(c.gathers, replicas * m * (1 + 2));
  EXPECT_EQ(c.tied, 2 * replicas);
  ASSERT_EQ(c.tied_bytes.size(), 1u);
  EXPECT_EQ(static_cast<double>(c.tied_bytes.begin()->first), kDsV / 2 * kDsH * 2);
  // DDP under the engine: buckets all-reduced on the compute stream (ReduceGrads), none beside.
  EXPECT_GT(c.dp_collectives["all_reduce"], 0);
  EXPECT_EQ(c.dp_streams.size(), 1u);
  EXPECT_GT(c.dp_streams["compute"], 0);
}

// ZeRO-1: BF16_Optimizer all-reduces its fp32 gradients (pipe/engine.py _bf16_reduce_grads);
// fp16's stage2.py, like Megatron, reduce-scatters.
TEST(DeepSpeedPipeline, Bf16ZeroOneAllReducesWhereFp16ReduceScatters) {
  const auto counts = [](const std::string& parallel, const std::string& precision) {
    std::string text = ds_gpt(parallel);
    text.replace(text.find("precision: bf16"), 15, "precision: " + precision);
    return ds_counts(build_schedule(parse_scenario(text, "z")).schedule).dp_collectives;
  };
  auto bf16 = counts("{tp: 2, pp: 2, data_parallel: zero1, pipeline_engine: deepspeed}", "bf16");
  EXPECT_GT(bf16["all_reduce"], 0);
  EXPECT_EQ(bf16["reduce_scatter"], 0);
  auto fp16 = counts("{tp: 2, pp: 2, data_parallel: zero1, pipeline_engine: deepspeed}", "fp16");
  EXPECT_EQ(fp16["all_reduce"], 0);
  EXPECT_GT(fp16["reduce_scatter"], 0);
  auto megatron = counts("{tp: 2, pp: 2, data_parallel: zero1}", "bf16");
  EXPECT_EQ(megatron["all_reduce"], 0);
}

// Megatron-LM all-reduces the tied word embedding's gradient between the first and the last
// stage too (megatron/core/distributed/finalize_model_grads.py _allreduce_word_embedding_grads),
// after the data-parallel reduction; the optimizer step waits for it. The same vocab/tp · h
// gradients of bf16 as ReduceTiedGrads above, once on each of the 8 end ranks; an untied model
// (Llama's) has none.
TEST(DeepSpeedPipeline, MegatronAllReducesTheTiedGradientAfterTheDataParallelReduction) {
  const int replicas = 4;
  const engine::Schedule s =
      build_schedule(parse_scenario(ds_gpt("{tp: 2, pp: 2}"), "mg")).schedule;
  const DsCounts c = ds_counts(s);
  EXPECT_EQ(c.tied, 2 * replicas);
  ASSERT_EQ(c.tied_bytes.size(), 1u);
  EXPECT_EQ(static_cast<double>(c.tied_bytes.begin()->first), kDsV / 2 * kDsH * 2);
  for (engine::OpId id = 0; id < s.ops.size(); ++id) {
    if (s.name_of(s.ops[id]).find("tied embedding") == std::string::npos) continue;
    bool after_dp = false;
    for (const engine::OpId d : s.dependencies(s.ops[id]))
      after_dp = after_dp || s.ops[d].category == engine::Category::dp_comm;
    EXPECT_TRUE(after_dp) << s.label(s.ops[id]);
  }
  for (const auto& op : s.ops)
    if (op.category == engine::Category::optimizer) {
      bool after_tied = false;
      for (const engine::OpId d : s.dependencies(op))
        after_tied = after_tied || s.name_of(s.ops[d]).find("tied embedding") != std::string::npos;
      EXPECT_TRUE(after_tied) << s.label(op);  // with pp = 2 every rank is at an end
    }
  std::string untied = ds_gpt("{tp: 2, pp: 2}");
  untied.replace(untied.find("tied_embeddings: true"), 21, "tied_embeddings: false");
  EXPECT_EQ(ds_counts(build_schedule(parse_scenario(untied, "u")).schedule).tied, 0);
}

// BF16_Optimizer's cast-then-add accumulation (transformer_kernels.hpp cast_main_grad) runs
// under DeepSpeed's engine with bf16, fp32 gradients and no fused accumulation, nowhere else.
TEST(DeepSpeedPipeline, Bf16OptimizersCastCopyOnlyUnderTheEngineWithFp32Gradients) {
  const auto casts = [](const std::string& parallel, const std::string& training) {
    std::string text = ds_gpt(parallel);
    text.replace(text.find("precision: bf16"), 15, training);
    const engine::KernelTable& t = build_schedule(parse_scenario(text, "c")).schedule.kernels;
    int n = 0;
    for (std::uint32_t i = 0; i < t.size(); ++i)
      for (const auto& k : t.list(i))
        n += t.name_of(k.name).ends_with(".wgrad_accumulate.cast");
    return n;
  };
  const std::string ds = "{tp: 2, pp: 2, pipeline_engine: deepspeed}";
  const std::string fp32_grads =
      "precision: bf16, grad_reduce_dtype: fp32, gradient_accumulation_fusion: false";
  EXPECT_GT(casts(ds, fp32_grads), 0);
  EXPECT_EQ(casts("{tp: 2, pp: 2}", fp32_grads), 0);
  EXPECT_EQ(casts(ds, "precision: bf16, gradient_accumulation_fusion: false"), 0);
  EXPECT_EQ(casts(ds, "precision: fp16, gradient_accumulation_fusion: false"), 0);
  EXPECT_EQ(casts(ds, "precision: bf16, grad_reduce_dtype: fp32"), 0);
}

TEST(DeepSpeedPipeline, RefusedPlansNameTheKey) {
  expect_plan_error(ds_gpt("{tp: 2, pp: 2, pipeline_engine: colossal}"), "e.yaml",
                    "parallel.pipeline_engine", "megatron");
  expect_plan_error(ds_gpt("{tp: 2, pipeline_engine: deepspeed}"), "e.yaml",
                    "parallel.pipeline_engine", "needs pipeline parallelism");
  expect_plan_error(ds_gpt("{pp: 2, schedule: gpipe, pipeline_engine: deepspeed}"), "e.yaml",
                    "parallel.schedule", "allowed: 1f1b");
  expect_plan_error(ds_gpt("{pp: 2, data_parallel: zero2, pipeline_engine: deepspeed}"), "e.yaml",
                    "parallel.data_parallel", "allowed: ddp, zero1");
  expect_plan_error(ds_gpt("{pp: 2, overlap: true, pipeline_engine: deepspeed}"), "e.yaml",
                    "parallel.overlap", "after the pipeline flush");
}

}  // namespace
}  // namespace clustersim::models
