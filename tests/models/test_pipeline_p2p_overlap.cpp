// When a pipeline's compute waits for its transfers (`parallel.pp_p2p_overlap`; docs/parallelism.md
// "When the compute waits for a transfer"; models/plans/pipeline_calls.hpp): Megatron's blocking
// calls timed by hand on two stages, the full overlap the model ran before, where each receive is
// posted under each choice, and the keys it refuses.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "models/run_scenario.hpp"
#include "models/scenario.hpp"
#include "tests/models/pipeline_scenarios.hpp"

namespace clustersim::models {
namespace {

using engine::OpId;
using engine::OpKind;

constexpr double kUs = 1e-6;
constexpr double kTimeTol = 1e-9;  // the optimizer's sub-nanosecond step and ps rounding

// The first compute op of (rank, category, micro-batch).
OpId first_compute(const engine::Schedule& s, engine::Rank r, engine::Category c,
                   std::uint32_t mb) {
  for (OpId id = 0; id < s.ops.size(); ++id)
    if (s.ops[id].kind == OpKind::compute && s.ops[id].rank == r && s.ops[id].category == c &&
        s.ops[id].microbatch() == mb)
      return id;
  ADD_FAILURE() << "no op of rank " << r << " mb " << mb;
  return 0;
}
OpId transfer(const engine::Schedule& s, OpKind kind, engine::Rank r, const std::string& name,
              std::uint32_t mb) {
  for (OpId id = 0; id < s.ops.size(); ++id)
    if (s.ops[id].kind == kind && s.ops[id].rank == r && s.name_of(s.ops[id]) == name &&
        s.ops[id].microbatch() == mb)
      return id;
  ADD_FAILURE() << "no " << name << " of rank " << r << " mb " << mb;
  return 0;
}

// two_stage_pipeline (12 us a transfer, F 10 us, B 20 us, two micro-batches) under Megatron's
// 1F1B, each call blocking the compute after it (Megatron's calls in brackets):
//   s0: F0 0–10 [send_forward: act0 10–22, s1's recv posted at 0]; F1 22–32
//       [send_forward_recv_backward: act1, grad0 posted at 32]
//   s1: F0 22–32; B0 32–52 [send_backward_recv_forward: grad0, act1 posted at 52]
//   act1 and grad0 52–64 (opposite directions, a link each)
//   s0: B0 64–84 [recv_backward: grad1 posted at 84];  s1: F1 64–74, B1 74–94 [send grad1]
//   grad1 94–106; s0: B1 106–126.
TEST(PipelineP2POverlap, MegatronsCallsBlockTheComputeAfterThemTwoStagesByHand) {
  const RunOutput out = run_scenario(parse_scenario(two_stage_pipeline(""), "mg.yaml"));
  EXPECT_NEAR(out.result.iteration_time_s, 126 * kUs, kTimeTol);
  const auto& s = out.built.schedule;
  const auto& t = out.timeline;
  // s0's second forward waits for its first send, which waits for s1's receive.
  EXPECT_NEAR(t.launch[first_compute(s, 0, engine::Category::forward, 1)].seconds(), 22 * kUs,
              kTimeTol);
  // s1 posts its receive of act1 after its first backward: the transfer runs 52–64.
  const OpId act1 = transfer(s, OpKind::recv, 1, "recv act", 1);
  EXPECT_NEAR(t.end[act1].seconds(), 64 * kUs, kTimeTol);
  EXPECT_NEAR(t.launch[first_compute(s, 0, engine::Category::backward, 0)].seconds(), 64 * kUs,
              kTimeTol);
  EXPECT_NEAR(t.launch[first_compute(s, 0, engine::Category::backward, 1)].seconds(), 106 * kUs,
              kTimeTol);
}

// `full`, the model's former behaviour: sends on streams of their own and receives posted
// ahead, so a stage runs on while its activation travels. s0: F0 0–10, F1 10–20; act0 10–22,
// act1 22–34 (the send stream is FIFO); s1: F0 22–32, B0 32–52, F1 52–62, B1 62–82; grad0
// 52–64, grad1 82–94; s0: B0 64–84, B1 94–114.
TEST(PipelineP2POverlap, FullOverlapRunsAStageOnWhileItsTransfersTravel) {
  const RunOutput out =
      run_scenario(parse_scenario(two_stage_pipeline("pp_p2p_overlap: full"), "full.yaml"));
  EXPECT_NEAR(out.result.iteration_time_s, 114 * kUs, kTimeTol);
  EXPECT_NEAR(
      out.timeline.launch[first_compute(out.built.schedule, 0, engine::Category::forward, 1)]
          .seconds(),
      10 * kUs, kTimeTol);
}

// The compute-stream op that ran last before `op` on its rank, of `category` if given.
OpId last_compute_before(const engine::Schedule& s, OpId op, const engine::Category* category) {
  OpId found = engine::kNone;
  for (OpId id = 0; id < op; ++id)
    if (s.ops[id].rank == s.ops[op].rank && s.stream_names[s.ops[id].stream] == "compute" &&
        (category == nullptr || s.ops[id].category == *category))
      found = id;
  return found;
}

// Where each receive is posted: on an interleaved plan (pp 2, 2 chunks a rank, 4 micro-batches)
// after the rank's last pass of its direction under `one_pass` (the first of a direction after
// the pass before it), whenever its stream is free under `full`; on 1F1B (pp 2, 4 micro-batches)
// under `none` after the pass before it (and, for a second pass of one direction, after that
// pass's sends too: the next test).
TEST(PipelineP2POverlap, EachChoicePostsAReceiveWhereItSays) {
  int ahead = 0;  // receives one_pass posts before the pass just ended
  for (const auto& [schedule, overlap] :
       {std::pair{"interleaved", "auto"}, std::pair{"interleaved", "one_pass"},
        std::pair{"interleaved", "full"}, std::pair{"interleaved", "none"},
        std::pair{"1f1b", "none"}}) {
    SCOPED_TRACE(std::string(schedule) + " " + overlap);
    const bool interleaved = std::string(schedule) == "interleaved";
    const BuiltSchedule built = build_schedule(
        parse_scenario(uniform_pipeline_scenario(schedule, 2, 4, interleaved ? 2 : 1, "1", "",
                                                 std::string(", pp_p2p_overlap: ") + overlap),
                       "p.yaml"));
    const auto& s = built.schedule;
    int recvs = 0;
    for (OpId id = 0; id < s.ops.size(); ++id) {
      if (s.ops[id].kind != OpKind::recv) continue;
      ++recvs;
      const auto deps = s.dependencies(s.ops[id]);
      if (std::string(overlap) == "full") {
        EXPECT_TRUE(deps.empty()) << s.label(s.ops[id]);
        continue;
      }
      const engine::Category direction = s.name_of(s.ops[id]) == "recv act"
                                             ? engine::Category::forward
                                             : engine::Category::backward;
      const OpId any = last_compute_before(s, id, nullptr);
      OpId expected = any;
      if (std::string(overlap) != "none")
        if (const OpId same = last_compute_before(s, id, &direction); same != engine::kNone)
          expected = same;
      if (expected == engine::kNone) {
        EXPECT_TRUE(deps.empty()) << s.label(s.ops[id]);
        continue;
      }
      ASSERT_FALSE(deps.empty()) << s.label(s.ops[id]);
      EXPECT_EQ(deps[0], expected) << s.label(s.ops[id]);
      if (std::string(overlap) != "none") {
        EXPECT_EQ(deps.size(), 1u) << s.label(s.ops[id]);
      }
      if (std::string(overlap) == "one_pass" && expected != any) ++ahead;
    }
    // Each rank's passes (2 ranks × 2 chunks or 1 × 4 micro-batches × 2), less the ends'.
    EXPECT_EQ(recvs, interleaved ? 2 * 2 * 4 * 2 - 2 * 4 : 2 * 4 * 2 - 2 * 4);
  }
  EXPECT_GT(ahead, 0);
}

// Megatron's interleaved schedule without overlap_p2p_comm (Megatron-LM before May 2023, or
// --no-overlap-p2p-communication): one blocking call after each warm-up forward
// (send_forward_recv_forward), after each steady forward-and-backward pair, which run back to back
// (send_forward_backward_recv_forward_backward), and after each cool-down backward
// (send_backward_recv_backward). two_stage_pipeline with 4 layers, 2 chunks a stage: chunks G0
// (s0), G1 (s1), G2 (s0), G3 (s1); F 10 us, B 20 us, a transfer 12 us, once both ends have posted.
// s0 runs its 4 forwards as warm-up ((p − 1)·2 + (v − 1)·p = 4), s1 2, then F(0,G3) B(0,G3)
// F(1,G3) B(1,G3), then B(0,G1) B(1,G1):
//   s0: F0 G0 0–10 [act 10–22]; F1 G0 22–32 [act1 out, act0 of G1 in: 32–44]; s1: F0 G1 22–32
//   s0: F0 G2 44–54, s1: F1 G1 44–54 [both ways 54–66]; s0: F1 G2 66–76, s1: F0 G3 66–76 and
//   B0 G3 76–96 with no call between [s1 posts at 96: grad0 out, act1 in; s0's from 76: 96–108]
//   s0: B0 G2 108–128, s1: F1 G3 108–118, B1 G3 118–138 [s0's grad0 out waits for s1's receive,
//   posted at 138: 138–150]; s0: B1 G2 150–170, s1: B0 G1 150–170 [170–182]
//   s0: B0 G0 182–202, s1: B1 G1 182–202 [grad1 202–214]; s0: B1 G0 214–234.
TEST(PipelineP2POverlap, MegatronsInterleavedCallsWithoutOverlapTwoStagesByHand) {
  const RunOutput out = run_scenario(parse_scenario(
      two_stage_pipeline("schedule: interleaved, virtual_stages: 2, pp_p2p_overlap: none", 4),
      "i.yaml"));
  const auto& s = out.built.schedule;
  const auto& t = out.timeline;
  EXPECT_NEAR(out.result.iteration_time_s, 234 * kUs, kTimeTol);
  // The n-th compute op of (rank, category, micro-batch) starts at `us`.
  const auto starts = [&](engine::Rank r, engine::Category c, std::uint32_t mb, int nth,
                          double us) {
    int seen = 0;
    for (OpId id = 0; id < s.ops.size(); ++id)
      if (s.ops[id].kind == OpKind::compute && s.ops[id].rank == r && s.ops[id].category == c &&
          s.ops[id].microbatch() == mb && seen++ == nth) {
        EXPECT_NEAR(t.start[id].seconds(), us * kUs, kTimeTol)
            << "rank " << r << " mb " << mb << " #" << nth;
        return;
      }
    ADD_FAILURE() << "no op #" << nth << " of rank " << r << " mb " << mb;
  };
  using engine::Category;
  starts(0, Category::forward, 1, 0, 22);   // F1 G0
  starts(0, Category::forward, 0, 1, 44);   // F0 G2
  starts(1, Category::backward, 0, 0, 76);  // B0 G3, right after its forward
  starts(0, Category::backward, 0, 0, 108);
  starts(1, Category::forward, 1, 1, 108);   // F1 G3
  starts(0, Category::backward, 1, 1, 214);  // B1 G0
  // Under overlap_p2p_comm (`auto`) the receives go a pass ahead: the same plan takes less.
  const RunOutput overlapped = run_scenario(
      parse_scenario(two_stage_pipeline("schedule: interleaved, virtual_stages: 2", 4), "o.yaml"));
  EXPECT_LT(overlapped.result.iteration_time_s, 234 * kUs - kTimeTol);
}

// ... and where the calls put a steady pair's transfers, on stage 0 of the same plan with 4
// micro-batches, whose first steady pair is F2 of chunk 0 and B0 of chunk 1: act2 leaves after
// the pair's backward (the call after both passes), and B0's gradient is received in the call
// before the forward, which waits for it. Under overlap_p2p_comm act2 leaves after its forward.
TEST(PipelineP2POverlap, MegatronsInterleavedCallsPostASteadyPairsTransfersAroundBothPasses) {
  for (const std::string overlap : {"none", "auto"}) {
    SCOPED_TRACE(overlap);
    const BuiltSchedule built = build_schedule(parse_scenario(
        uniform_pipeline_scenario("interleaved", 2, 4, 2, "1", "", ", pp_p2p_overlap: " + overlap),
        "i.yaml"));
    const auto& s = built.schedule;
    const auto act2 = s.dependencies(s.ops[transfer(s, OpKind::send, 0, "send act", 2)]);
    ASSERT_EQ(act2.size(), 1u);
    EXPECT_EQ(s.ops[act2[0]].category,
              overlap == "none" ? engine::Category::backward : engine::Category::forward);
    EXPECT_EQ(s.ops[act2[0]].microbatch(), overlap == "none" ? 0u : 2u);
    const OpId grad0 = transfer(s, OpKind::recv, 0, "recv grad", 0);
    const OpId f2 = first_compute(s, 0, engine::Category::forward, 2);
    const auto f2_waits = s.dependencies(s.ops[f2]);
    EXPECT_EQ(std::count(f2_waits.begin(), f2_waits.end(), grad0), overlap == "none" ? 1 : 0);
  }
}

// Megatron's 1F1B posts two passes of one direction in separate calls (send_forward, then
// recv_forward): in stage 1's warmup of three stages the receive of act1 waits for the send of
// act0; one_pass, which posts them together, does not.
TEST(PipelineP2POverlap, MegatronsSeparateCallsMakeAReceiveWaitForTheSendBefore) {
  for (const std::string overlap : {"auto", "one_pass"}) {
    const BuiltSchedule built = build_schedule(parse_scenario(
        uniform_pipeline_scenario("1f1b", 3, 3, 1, "1", "", ", pp_p2p_overlap: " + overlap),
        "s.yaml"));
    const auto& s = built.schedule;
    const OpId send0 = transfer(s, OpKind::send, 1, "send act", 0);
    const auto deps = s.dependencies(s.ops[transfer(s, OpKind::recv, 1, "recv act", 1)]);
    EXPECT_EQ(std::count(deps.begin(), deps.end(), send0), overlap == "auto" ? 1 : 0) << overlap;
    // Either way the forward after the call waits for the send.
    const auto f1 = s.dependencies(s.ops[first_compute(s, 1, engine::Category::forward, 1)]);
    EXPECT_EQ(std::count(f1.begin(), f1.end(), send0), 1) << overlap;
  }
}

TEST(PipelineP2POverlap, UnknownChoicesAndDeepSpeedAreRefusedNamingTheKey) {
  expect_plan_error(uniform_pipeline_scenario("1f1b", 2, 4, 1, "1", "", ", pp_p2p_overlap: some"),
                    "bad.yaml", "parallel.pp_p2p_overlap",
                    "allowed: auto | none | one_pass | full");
  expect_plan_error(two_stage_pipeline("pipeline_engine: deepspeed, pp_p2p_overlap: none"),
                    "ds.yaml", "parallel.pp_p2p_overlap", "DeepSpeed's pipeline engine blocks");
  // DualPipe makes its own blocking calls (test_dualpipe_calls.cpp), none a pass ahead.
  expect_plan_error(
      uniform_pipeline_scenario("dualpipe", 2, 4, 1, "1", "", ", pp_p2p_overlap: one_pass"),
      "dp.yaml", "parallel.pp_p2p_overlap", "allowed: auto, none, full");
}

}  // namespace
}  // namespace clustersim::models
