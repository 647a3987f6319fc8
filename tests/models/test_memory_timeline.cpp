// The memory timeline (docs/memory.md "Timeline") against what must hold whatever the plan: every
// activation a micro-batch keeps (and everything its recompute brings back) is gone once its
// backward has run, and the gradients go with the optimizer step (zero_grad(set_to_none=True)),
// so the iteration ends where it started; and the timeline, which leaves out transients, never
// rises above the memory model's peak.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "models/run_scenario.hpp"
#include "models/scenario.hpp"
#include "moe_test_model.hpp"

namespace clustersim::models {
namespace {

Scenario timeline_scenario(const std::string& model, const std::string& recompute,
                           const std::string& parallel) {
  return parse_scenario(
      "name: memory-timeline\n"
      "cluster: {nodes: 1, node: dgx-h100}\n" +
          model +
          "training: {global_batch: 32, micro_batch: 1, seq_len: 512, "
          "precision: bf16, recompute: " +
          recompute +
          "}\n"
          "parallel: " +
          parallel + "\n",
      "memory-timeline.yaml");
}

void expect_returns_to_start_below_peak(const Scenario& sc) {
  const Result r = run_scenario(sc).result;
  const auto& points = r.memory.timeline;
  ASSERT_GE(points.size(), 2u);
  EXPECT_NEAR(points.back().bytes, points.front().bytes, 1e-9 * points.front().bytes);
  double highest = 0;
  for (const auto& p : points)
    highest = std::max(highest, p.bytes);
  EXPECT_LE(highest, r.memory.total());
}

// An MoE block's forward, recompute and backward are several compute ops each (router, experts,
// shared experts): the block's recompute brings its activations back once, not once per op.
TEST(MemoryTimeline, MoeFullRecomputeReturnsToItsStart) {
  for (const char* parallel : {"{ep: 8}", "{ep: 8, data_parallel: fsdp}", "{ep: 4}"}) {
    SCOPED_TRACE(parallel);
    expect_returns_to_start_below_peak(timeline_scenario(small_moe_model(2), "full", parallel));
  }
}

TEST(MemoryTimeline, DenseReturnsToItsStart) {
  const std::string dense =
      "model: {num_layers: 2, hidden_size: 1024, num_heads: 8, vocab_size: 32000}\n";
  for (const char* recompute : {"none", "selective", "full"}) {
    SCOPED_TRACE(recompute);
    expect_returns_to_start_below_peak(timeline_scenario(dense, recompute, "{tp: 2}"));
  }
}

// FSDP reshards its units for the optimizer step and holds no gradient waiting for a
// reduce-scatter there (docs/memory.md "Phases"); the timeline counts both as a constant
// otherwise. The step is resolved in time (its temporaries and gradients), so while it runs the
// timeline cannot stand above the peak. A foreach step (a parameter-sized temporary) over
// activations of 64 tokens.
TEST(MemoryTimeline, FsdpOptimizerStepHoldsNoGatheredUnits) {
  const std::string dense =
      "model: {num_layers: 4, hidden_size: 2048, num_heads: 16, vocab_size: 32000}\n";
  for (const char* parallel :
       {"{data_parallel: fsdp}", "{data_parallel: fsdp, fsdp: {root_unit: true}}",
        "{data_parallel: zero3}", "{data_parallel: hsdp}"}) {
    SCOPED_TRACE(parallel);
    Scenario sc = timeline_scenario(dense, "full", parallel);
    sc.training.seq_len = 64;
    sc.training.global_batch = 8;
    sc.training.optimizer_impl = OptimizerImpl::foreach;
    const RunOutput out = run_scenario(sc);
    const auto& s = out.built.schedule;
    const auto rank = static_cast<engine::Rank>(out.result.memory.peak_rank);
    int steps = 0;
    for (engine::OpId id = 0; id < s.ops.size(); ++id) {
      if (s.ops[id].rank != rank || s.ops[id].category != engine::Category::optimizer) continue;
      ++steps;
      const double from = out.timeline.launch[id].seconds(), to = out.timeline.end[id].seconds();
      for (const auto& p : out.result.memory.timeline)
        if (p.time_s >= from && p.time_s < to) {
          EXPECT_LE(p.bytes, out.result.memory.total());
        }
    }
    EXPECT_EQ(steps, 1);
  }
}

}  // namespace
}  // namespace clustersim::models
