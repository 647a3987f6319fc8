// Megatron-Core's interleaved schedule with micro-batch groups (docs/parallelism.md "Schedules";
// megatron/core/model_parallel_config.py, microbatch_group_size_per_vp_stage): each virtual stage
// runs g micro-batches in a row before the next chunk's, the last group taking what is left.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "models/plans/pipeline_order.hpp"
#include "models/run_scenario.hpp"
#include "pipeline_scenarios.hpp"

namespace clustersim::models {
namespace {

// The forward passes' micro-batches, in order.
std::vector<int> forward_microbatches(const std::vector<PipelineStep>& steps) {
  std::vector<int> out;
  for (const auto& s : steps)
    if (s.forward) out.push_back(s.microbatch);
  return out;
}

// The two examples of Megatron-Core's documentation of the knob, PP = 2, VP = 2:
// g = 2, m = 4: "rank 0 | 0 1 0 1 2 3 2 3"; g = 3, m = 5: "rank 0 | 0 1 2 0 1 2 3 4 3 4".
TEST(InterleavedGroups, ForwardOrderFollowsMegatronsExamples) {
  EXPECT_EQ(forward_microbatches(pipeline_order(PipelineSchedule::interleaved, 0, 2, 4, 2, 2)),
            (std::vector<int>{0, 1, 0, 1, 2, 3, 2, 3}));
  EXPECT_EQ(forward_microbatches(pipeline_order(PipelineSchedule::interleaved, 0, 2, 4, 2, 0)),
            (std::vector<int>{0, 1, 0, 1, 2, 3, 2, 3}));  // 0: the default, g = pp
  const auto five = pipeline_order(PipelineSchedule::interleaved, 0, 2, 5, 2, 3);
  EXPECT_EQ(forward_microbatches(five), (std::vector<int>{0, 1, 2, 0, 1, 2, 3, 4, 3, 4}));
  // ... chunk 0 for the first three, then chunk 1; backward runs each through the chunks in
  // reverse, every (micro-batch, chunk) once, after its forward.
  std::set<std::pair<int, int>> forwarded, backwarded;
  for (const auto& s : five) {
    if (s.forward) {
      EXPECT_TRUE(forwarded.insert({s.microbatch, s.chunk}).second);
    } else {
      EXPECT_TRUE(forwarded.count({s.microbatch, s.chunk}));
      EXPECT_TRUE(backwarded.insert({s.microbatch, s.chunk}).second);
    }
  }
  EXPECT_EQ(backwarded.size(), 10u);
  EXPECT_EQ(five[3].chunk, 1);
}

// Stage s warms up with (p − s − 1)·2 + (v − 1)·g forwards, so it holds that plus one chunk
// activation (at most all m·v): the group, not pp, sets the memory of the interleaved schedule.
TEST(InterleavedGroups, WarmUpGrowsWithTheGroup) {
  for (int g : {4, 6, 12})  // groups dividing m = 12
    for (int stage = 0; stage < 4; ++stage)
      EXPECT_EQ(peak_in_flight(pipeline_order(PipelineSchedule::interleaved, stage, 4, 12, 2, g)),
                std::min((4 - stage - 1) * 2 + g + 1, 24))
          << "g " << g << " stage " << stage;
}

// A whole run: 24 equal layers over pp 2 × 2 chunks, 5 micro-batches in groups of 3, nothing but
// compute; every stage ends its work and the iteration is no shorter than one stage's compute.
TEST(InterleavedGroups, AnUnevenLastGroupRuns) {
  std::string text = uniform_pipeline_scenario("interleaved", 2, 5, 2);
  text.replace(text.find("virtual_stages: 2"), 17, "virtual_stages: 2, microbatch_group_size: 3");
  const Result r = run_scenario(parse_scenario(text, "test")).result;
  EXPECT_GT(r.iteration_time_s, 0.0);
  EXPECT_GE(r.iteration_time_s, r.breakdown_s.compute);
  EXPECT_GT(r.bubble_fraction, 0.0);
}

// Megatron-Core's leading stage receives a tensor p − 1 passes after the ending stage produced it
// (schedules.py, recv_tensor_from_previous_stage). pp 2, 2 chunks, m = 6 in groups of 3: stage 0
// forwards (0,c0) (1,c0) (2,c0) (0,c1) (1,c1) warm up, then F (2,c1) B, F (3,c0) B, F (4,c0) B, ...
// Chunk 1 of micro-batch 0 takes what stage 1's first forward made: received after stage 0's
// second, (1,c0), not after (2,c0), the forward before it; chunk 1 of micro-batch 3 takes stage
// 1's 7th forward's, received after stage 0's 8th, (4,c0): right after it under overlap_p2p_comm,
// in the call after its steady pair (whose backward is micro-batch 2's) without it. Posted later,
// the stages wait for each other's sends: every choice must run to the end.
TEST(InterleavedGroups, TheLeadingStageReceivesWhereMegatronCoreAlignsIt) {
  for (const std::string overlap : {"one_pass", "none", "full"}) {
    SCOPED_TRACE(overlap);
    const RunOutput out = run_scenario(parse_scenario(
        uniform_pipeline_scenario("interleaved", 2, 6, 2, "1", ", activation_bytes: 1MB",
                                  ", microbatch_group_size: 3, pp_p2p_overlap: " + overlap),
        "g.yaml"));
    EXPECT_GE(out.result.iteration_time_s, out.result.breakdown_s.compute);
    if (overlap == "full") continue;
    const auto& s = out.built.schedule;
    const auto posted_after = [&](std::uint32_t mb) {
      for (engine::OpId id = 0; id < s.ops.size(); ++id)
        if (s.ops[id].kind == engine::OpKind::recv && s.ops[id].rank == 0 &&
            s.name_of(s.ops[id]) == "recv act" && s.ops[id].microbatch() == mb) {
          const auto deps = s.dependencies(s.ops[id]);
          if (deps.empty()) break;
          return s.ops[deps[0]];
        }
      ADD_FAILURE() << "no receive of mb " << mb << " posted after a compute op";
      return engine::Op{};
    };
    const engine::Op first = posted_after(0);
    EXPECT_EQ(first.category, engine::Category::forward);
    EXPECT_EQ(first.microbatch(), 1u);
    const engine::Op later = posted_after(3);
    EXPECT_EQ(later.category,
              overlap == "none" ? engine::Category::backward : engine::Category::forward);
    EXPECT_EQ(later.microbatch(), overlap == "none" ? 2u : 4u);
  }
}

}  // namespace
}  // namespace clustersim::models
