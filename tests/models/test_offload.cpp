// Optimizer offload (parallel.offload.optimizer, ZeRO-Offload) against figures worked by hand
// (docs/offload.md). The model: Ψ = 8e6 parameters (8 layers of 1e6), bf16 with
// fp32 master weights and Adam (K = 12 bytes of state per parameter), ZeRO-2 over the 2 GPUs of
// a DGX A100 cut to 2 GPUs: each rank steps P = Ψ/2 = 4e6 parameters.
//   gradient shard down:  2 B · P = 8e6 B      parameter shard up: 2 B · P = 8e6 B
//   ZeRO-2's buckets (torch's: the first closes at 1 MiB, the next at 25 MiB): the last layer's
//   2 MB of gradients, then the other seven's 14 MB; each bucket's share of the shard goes down
//   once its reduce-scatter ends: 1e6 B, then 7e6 B.
//   CPU Adam step:        28 B · P = 112e6 B at 2 × 8 × 3200 MT/s × 8 B = 409.6 GB/s × 0.7,
//                         shared by the node's 2 ranks: 143.36 GB/s each → 781.25 µs
//   PCIe: 25 GB/s per direction; both GPUs sit under one PCIe switch, whose uplink to the CPU
//   they share, so the two ranks' simultaneous 8 MB copies take 16e6 / 25e9 = 640 µs, plus the
//   route's latency (GPU → switch → CPU, 2 × 0.5 µs).
//   host memory: per rank K·P + 2·P = 56e6 B, per node 112e6 B; the GPU's optimizer term 0.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "models/run_scenario.hpp"

namespace clustersim::models {
namespace {

constexpr double kPsi = 8e6;
constexpr double kP = kPsi / 2;
constexpr double kPcie = 25e9;
constexpr double kRouteLatency = 2 * 0.5e-6;
constexpr double kHostRankBandwidth = 2 * 8 * 3200e6 * 8 * 0.7 / 2;

std::string scenario_text(const std::string& parallel, const std::string& cluster_extra = "",
                          const std::string& forward_flops = "1e9") {
  return "cluster: {nodes: 1, node: dgx-a100, gpus_per_node: 2" + cluster_extra +
         "}\nmodel:\n  layers: [{name: block, params: 1e6, forward_flops: " + forward_flops +
         R"(, activation_bytes: 1MB, repeat: 8}]
training: {global_batch: 2, micro_batch: 1, precision: bf16, optimizer: adam}
parallel: {)" +
         parallel + "}\n";
}

RunOutput run(const std::string& parallel, const std::string& cluster_extra = "",
              const std::string& forward_flops = "1e9") {
  return run_scenario(
      parse_scenario(scenario_text(parallel, cluster_extra, forward_flops), "offload.yaml"));
}

// Duration of rank `rank`'s op named `name`, in seconds; -1 when there is none.
double duration_of(const RunOutput& out, engine::Rank rank, const std::string& name) {
  const engine::Schedule& s = out.built.schedule;
  for (engine::OpId id = 0; id < s.ops.size(); ++id)
    if (s.ops[id].rank == rank && s.name_of(s.ops[id]) == name)
      return (out.timeline.end[id] - out.timeline.start[id]).seconds();
  return -1;
}

// Rank `rank`'s ops named `name`, in the order they were issued.
std::vector<engine::OpId> ops_named(const RunOutput& out, engine::Rank rank,
                                    const std::string& name) {
  const engine::Schedule& s = out.built.schedule;
  std::vector<engine::OpId> ids;
  for (engine::OpId id = 0; id < s.ops.size(); ++id)
    if (s.ops[id].rank == rank && s.name_of(s.ops[id]) == name) ids.push_back(id);
  return ids;
}

double seconds(const RunOutput& out, engine::OpId id, bool end) {
  return (end ? out.timeline.end[id] : out.timeline.start[id]).seconds();
}

std::optional<engine::Op> op_named(const RunOutput& out, engine::Rank rank,
                                   const std::string& name) {
  const engine::Schedule& s = out.built.schedule;
  for (const engine::Op& op : s.ops)
    if (op.rank == rank && s.name_of(op) == name) return op;
  return std::nullopt;
}

constexpr const char* kOffload = "data_parallel: zero2, offload: {optimizer: true}";

TEST(Offload, CopiesTheGradientShardDownAndTheParameterShardUp) {
  const RunOutput out = run(kOffload);
  for (engine::Rank r : {0u, 1u}) {
    const std::optional<engine::Op> down = op_named(out, r, "offload grads d2h");
    const std::optional<engine::Op> up = op_named(out, r, "offload params h2d");
    ASSERT_TRUE(down.has_value());
    ASSERT_TRUE(up.has_value());
    EXPECT_EQ(down->kind, engine::OpKind::copy);
    EXPECT_EQ(down->tag(), static_cast<std::uint32_t>(engine::CopyDirection::to_host));
    EXPECT_EQ(up->tag(), static_cast<std::uint32_t>(engine::CopyDirection::from_host));
    const auto downs = ops_named(out, r, "offload grads d2h");
    ASSERT_EQ(downs.size(), 2u);
    EXPECT_EQ(out.built.schedule.ops[downs[0]].bytes, 1'000'000u);
    EXPECT_EQ(out.built.schedule.ops[downs[1]].bytes, 7'000'000u);
    EXPECT_EQ(up->bytes, static_cast<std::uint64_t>(2 * kP));
    EXPECT_EQ(out.built.schedule.stream_names[down->stream], "offload d2h");
    EXPECT_EQ(out.built.schedule.stream_names[up->stream], "offload h2d");
  }
  // No optimizer step on the GPU.
  EXPECT_FALSE(op_named(out, 0, "optimizer step").has_value());
}

TEST(Offload, CopiesShareThePcieSwitchUplinkAtItsBandwidth) {
  const RunOutput out = run(kOffload);
  const double both = 2 * 2 * kP / kPcie + kRouteLatency;  // 641 µs
  for (engine::Rank r : {0u, 1u}) {
    const auto downs = ops_named(out, r, "offload grads d2h");
    ASSERT_EQ(downs.size(), 2u);
    // Both ranks' buckets go down together: 2 × 1e6 B, then 2 × 7e6 B, over the one uplink.
    EXPECT_NEAR(seconds(out, downs[0], true) - seconds(out, downs[0], false),
                2 * 1e6 / kPcie + kRouteLatency, 1e-9)
        << r;
    EXPECT_NEAR(seconds(out, downs[1], true) - seconds(out, downs[1], false),
                2 * 7e6 / kPcie + kRouteLatency, 1e-9)
        << r;
    EXPECT_NEAR(duration_of(out, r, "offload params h2d"), both, 1e-9) << r;
  }
}

TEST(Offload, CpuStepTakesItsBytesAtTheRanksShareOfHostBandwidth) {
  const RunOutput out = run(kOffload);
  EXPECT_NEAR(duration_of(out, 0, "cpu optimizer step"), 28 * kP / kHostRankBandwidth, 1e-9);
  // A stated host bandwidth replaces the preset's: 100 GB/s × 0.7 / 2 ranks = 35 GB/s.
  const RunOutput slow = run(kOffload, ", host: {memory_bandwidth: 100GB/s}");
  EXPECT_NEAR(duration_of(slow, 0, "cpu optimizer step"), 28 * kP / 35e9, 1e-9);
}

// Each bucket's copy starts when its reduce-scatter ends, while the backward of the layers
// before it still runs (DeepSpeed's overlap of the gradient copies with the backward).
TEST(Offload, EachBucketGoesDownWhenItsReductionEnds) {
  const RunOutput out = run(kOffload);
  const auto downs = ops_named(out, 0, "offload grads d2h");
  const auto reductions = ops_named(out, 0, "zero bucket 0 reduce_scatter");
  ASSERT_EQ(downs.size(), 2u);
  ASSERT_FALSE(reductions.empty());
  EXPECT_DOUBLE_EQ(seconds(out, downs[0], false), seconds(out, reductions.back(), true));
  double backward_end = 0;
  const engine::Schedule& s = out.built.schedule;
  for (engine::OpId id = 0; id < s.ops.size(); ++id)
    if (s.ops[id].rank == 0 && s.ops[id].category == engine::Category::backward)
      backward_end = std::max(backward_end, seconds(out, id, true));
  EXPECT_LT(seconds(out, downs[0], false), backward_end);
  // The CPU step waits for the last bucket.
  EXPECT_DOUBLE_EQ(seconds(out, ops_named(out, 0, "cpu optimizer step")[0], false),
                   seconds(out, downs[1], true));
}

// On one GPU (ZeRO-Offload's first use: a model too large for one GPU's memory) there is no
// reduction to follow: the whole gradient, 2 B · Ψ, goes down once the backward has ended.
TEST(Offload, OnOneGpuTheGradientsGoDownAfterTheBackward) {
  const RunOutput out =
      run_scenario(parse_scenario(R"(cluster: {nodes: 1, node: dgx-a100, gpus_per_node: 1}
model:
  layers: [{name: block, params: 1e6, forward_flops: 1e9, activation_bytes: 1MB, repeat: 8}]
training: {global_batch: 1, micro_batch: 1, precision: bf16, optimizer: adam}
parallel: {data_parallel: zero2, offload: {optimizer: true}}
)",
                                  "one.yaml"));
  const auto downs = ops_named(out, 0, "offload grads d2h");
  ASSERT_EQ(downs.size(), 1u);
  EXPECT_EQ(out.built.schedule.ops[downs[0]].bytes, static_cast<std::uint64_t>(2 * kPsi));
  double backward_end = 0;
  const engine::Schedule& s = out.built.schedule;
  for (engine::OpId id = 0; id < s.ops.size(); ++id)
    if (s.ops[id].rank == 0 && s.ops[id].category == engine::Category::backward)
      backward_end = std::max(backward_end, seconds(out, id, true));
  EXPECT_GT(backward_end, 0);
  EXPECT_GE(seconds(out, downs[0], false), backward_end);
}

TEST(Offload, IterationPaysTheCopiesAndTheCpuStep) {
  // The last bucket's copy, the CPU step and the upload run in series between the last
  // reduction and the parameter all-gather, in place of the GPU's optimizer step; the first
  // bucket's copy (81 µs) has ended by then, hidden behind the other seven layers' backward and
  // their reduce-scatter. The iteration grows by their hand-made times less the GPU step.
  const RunOutput with = run(kOffload);
  const RunOutput without = run("data_parallel: zero2");
  const double gpu_step = duration_of(without, 0, "optimizer step");
  ASSERT_GT(gpu_step, 0);
  const double offload = (2 * 7e6 / kPcie + kRouteLatency) + (2 * 2 * kP / kPcie + kRouteLatency) +
                         28 * kP / kHostRankBandwidth;
  EXPECT_NEAR(with.result.iteration_time_s - without.result.iteration_time_s, offload - gpu_step,
              1e-6);
  EXPECT_NEAR(with.result.offload.to_host_bytes, 2 * kP, 0);
  EXPECT_NEAR(with.result.offload.from_host_bytes, 2 * kP, 0);
  EXPECT_NEAR(with.result.offload.host_step_s, 28 * kP / kHostRankBandwidth, 1e-9);
  EXPECT_FALSE(without.result.offload.any());
}

TEST(Offload, OptimizerStatesMoveFromHbmToHost) {
  const MemoryEstimate off = run(kOffload).result.memory;
  const MemoryEstimate on = run("data_parallel: zero2").result.memory;
  EXPECT_DOUBLE_EQ(on.peak.optimizer, 12 * kP);
  EXPECT_DOUBLE_EQ(off.peak.optimizer, 0);
  EXPECT_DOUBLE_EQ(off.host_per_stage.at(0), 12 * kP + 2 * kP);
  EXPECT_DOUBLE_EQ(off.host_per_node, 2 * (12 * kP + 2 * kP));
  EXPECT_DOUBLE_EQ(off.host_capacity, 2048.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(on.host_per_node, 0);
  EXPECT_TRUE(off.fits());
}

TEST(Offload, VerdictFlagsHostMemoryOverflow) {
  // 100 MB of host memory for the node's 112 MB.
  const MemoryEstimate m = run(kOffload, ", host: {memory: 100MB}").result.memory;
  EXPECT_DOUBLE_EQ(m.host_capacity, 100e6);
  EXPECT_FALSE(m.host_fits());
  EXPECT_FALSE(m.fits());
  EXPECT_EQ(m.verdict(), MemoryVerdict::does_not_fit);
  const MemoryEstimate ok = run(kOffload, ", host: {memory: 113MB}").result.memory;
  EXPECT_TRUE(ok.host_fits());
}

// Activation offload: 8 layers keep 1 MB each per micro-batch (activation_bytes × micro_batch 1);
// one micro-batch per rank. Every layer's 1 MB goes down after its forward and back before its
// backward; the GPU keeps a window of 2 layers (2 MB) instead of 8 MB; the host 8 MB per rank.
constexpr const char* kActivations = "data_parallel: zero2, offload: {activations: true}";

TEST(Offload, ActivationsGoDownAfterForwardAndComeBackBeforeBackward) {
  const RunOutput out = run(kActivations);
  const engine::Schedule& s = out.built.schedule;
  int down = 0, up = 0;
  for (engine::OpId id = 0; id < s.ops.size(); ++id) {
    const engine::Op& op = s.ops[id];
    if (op.rank != 0 || !engine::is_host_copy(op)) continue;
    EXPECT_EQ(op.bytes, 1'000'000u) << s.name_of(op);
    const bool d2h = op.tag() == static_cast<std::uint32_t>(engine::CopyDirection::to_host);
    (d2h ? down : up) += 1;
    EXPECT_EQ(s.name_of(op), "block[" + std::to_string(d2h ? down - 1 : 8 - up) + "]" +
                                 (d2h ? " act d2h" : " act h2d"));
  }
  EXPECT_EQ(down, 8);
  EXPECT_EQ(up, 8);
  // Each reload ends before its layer's backward starts.
  for (int l = 0; l < 8; ++l) {
    const std::string layer = "block[" + std::to_string(l) + "]";
    engine::Time reloaded{}, backward{};
    for (engine::OpId id = 0; id < s.ops.size(); ++id) {
      if (s.ops[id].rank != 0) continue;
      if (s.name_of(s.ops[id]) == layer + " act h2d") reloaded = out.timeline.end[id];
      if (s.name_of(s.ops[id]) == layer + " bwd") backward = out.timeline.start[id];
    }
    EXPECT_LE(reloaded, backward) << layer;
  }
}

// With forwards of 1e11 FLOPs (≈ 0.4 ms each on an A100) the 1 MB copies (80 µs with the two
// ranks sharing the switch's uplink) keep pace: one layer computed, one in transit.
TEST(Offload, ActivationsLeaveAWindowOfTwoLayersOnTheGpu) {
  const MemoryEstimate off = run(kActivations, "", "1e11").result.memory;
  const MemoryEstimate on = run("data_parallel: zero2", "", "1e11").result.memory;
  EXPECT_DOUBLE_EQ(on.peak.activations, 8e6);
  EXPECT_DOUBLE_EQ(off.peak.activations, 2e6);
  EXPECT_DOUBLE_EQ(off.host_per_stage.at(0), 8e6);
  EXPECT_DOUBLE_EQ(off.host_per_node, 2 * 8e6);
  // Both offloads: the host holds the states, the gradient shard and the activations.
  const MemoryEstimate both =
      run("data_parallel: zero2, offload: {optimizer: true, activations: true}").result.memory;
  EXPECT_DOUBLE_EQ(both.host_per_stage.at(0), 12 * kP + 2 * kP + 8e6);
}

// With forwards of 1e9 FLOPs (≈ 10 µs each) the 80 µs copies fall behind: when the last forward
// ends, every layer whose copy has not ended is still on the GPU, counted from the simulated
// copies' end times; the estimate cannot hold less (before 3 Dec 2026 it assumed a window of two
// layers whatever the pace, 2 MB here).
TEST(Offload, ActivationsWaitingForTheirCopyStayOnTheGpu) {
  const RunOutput out = run(kActivations);
  const double forward_end = out.timeline.end[ops_named(out, 0, "block[7] fwd").at(0)].seconds();
  double on_gpu = 0;
  for (int l = 0; l < 8; ++l)
    for (const engine::OpId id : ops_named(out, 0, "block[" + std::to_string(l) + "] act d2h"))
      if (out.timeline.end[id].seconds() >= forward_end) on_gpu += 1e6;
  EXPECT_GT(on_gpu, 2e6);  // the copies do fall behind here
  EXPECT_GE(out.result.memory.peak.activations, on_gpu);
  EXPECT_LE(out.result.memory.peak.activations, 8e6);  // never more than without offload
}

// The memory timeline follows the copies (docs/memory.md "Timeline"): with forwards of 1e11 FLOPs
// (≈ 0.4 ms each on an A100) against 1 MB copies (40 µs at 25 GB/s), every layer but the last has
// gone down by the time the forward ends, so the GPU then holds one layer's 1 MB above where the
// iteration started, where it holds all 8 MB without offload; and every reload comes back before
// its backward frees it, so the iteration ends where it started.
TEST(Offload, MemoryTimelineFollowsTheActivationCopies) {
  auto above_start_when_forward_ends = [](bool offload) {
    const std::string text =
        "cluster: {nodes: 1, node: dgx-a100, gpus_per_node: 2}\n"
        "model:\n"
        "  layers: [{name: block, params: 1e6, forward_flops: 1e11, activation_bytes: 1MB, "
        "repeat: 8}]\n"
        "training: {global_batch: 2, micro_batch: 1, precision: bf16, optimizer: adam}\n"
        "parallel: {data_parallel: zero2, offload: {activations: " +
        std::string(offload ? "true" : "false") + "}}\n";
    const RunOutput out = run_scenario(parse_scenario(text, "offload.yaml"));
    const auto& points = out.result.memory.timeline;
    EXPECT_NEAR(points.back().bytes, points.front().bytes, 1.0);
    const engine::Rank rank = static_cast<engine::Rank>(out.result.memory.peak_rank);
    const engine::OpId last_forward = ops_named(out, rank, "block[7] fwd").at(0);
    const double t = out.timeline.end[last_forward].seconds();
    double at = points.front().bytes;
    for (const auto& p : points)
      if (p.time_s <= t) at = p.bytes;
    return at - points.front().bytes;
  };
  EXPECT_NEAR(above_start_when_forward_ends(false), 8e6, 1.0);
  EXPECT_NEAR(above_start_when_forward_ends(true), 1e6, 1.0);
}

void expect_error(const std::string& text, const std::string& key, const std::string& words) {
  try {
    parse_scenario(text, "offload.yaml");
    ADD_FAILURE() << "no error for " << key;
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.key(), key) << e.what();
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("offload.yaml:"), std::string::npos) << e.what();
  }
}

TEST(Offload, ValidationNamesTheKey) {
  expect_error(scenario_text("data_parallel: ddp, offload: {optimizer: true}"),
               "parallel.offload.optimizer", "ZeRO-Offload");
  expect_error(scenario_text("data_parallel: zero1, offload: {optimizer: yes}"),
               "parallel.offload.optimizer", "");
  expect_error(scenario_text("data_parallel: zero1, offload: {optimiser: true}"),
               "parallel.offload.optimiser", "");
  // A node described key by key has no host memory unless it says so.
  const std::string explicit_node = R"(cluster: {nodes: 1, gpus_per_node: 2, gpu: A100-SXM4-80GB}
model:
  layers: [{name: block, params: 1e6, forward_flops: 1e9, activation_bytes: 1MB, repeat: 8}]
training: {global_batch: 2, micro_batch: 1, precision: bf16, optimizer: adam}
parallel: {data_parallel: zero2, offload: {optimizer: true}}
)";
  expect_error(explicit_node, "cluster.host.memory", "host memory");
  expect_error(scenario_text(kOffload, ", host: {memory: 0B}"), "cluster.host.memory", "");
  expect_error(scenario_text(kOffload, ", host: {memory_bandwidth: 10}"),
               "cluster.host.memory_bandwidth", "");
}

}  // namespace
}  // namespace clustersim::models
