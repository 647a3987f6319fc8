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

}  // namespace
}  // namespace clustersim::models
