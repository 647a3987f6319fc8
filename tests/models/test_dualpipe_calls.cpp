// DualPipe's calls (deepseek-ai/DualPipe dualpipe.py; models/plans/pipeline_calls.hpp): a call
// before every chunk posts the sends the chunks before it left, and the chunk waits for them. A
// chunk's sends go at its end, which for a full backward is after its weight gradients, and step
// 2 holds a near forward's sends back past the far forward that follows it. Checked op by op
// against the step list that dualpipe_order reproduces (test_dualpipe.cpp checks that list).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/plans/pipeline_order.hpp"
#include "models/run_scenario.hpp"
#include "models/scenario.hpp"
#include "tests/models/pipeline_scenarios.hpp"

namespace clustersim::models {
namespace {

using engine::OpId;
using engine::OpKind;

// p ranks, 24 identical layers, m micro-batches (pipeline_scenarios.hpp).
RunOutput run_dualpipe(int p, int m, const std::string& overlap) {
  return run_scenario(parse_scenario(
      uniform_pipeline_scenario("dualpipe", p, m, 1, "1", ", activation_bytes: 1MB",
                                overlap.empty() ? "" : ", pp_p2p_overlap: " + overlap),
      "dualpipe.yaml"));
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The send of `name` ("send act" / "send grad") for micro-batch mb on rank r.
OpId send_of(const engine::Schedule& s, engine::Rank r, const std::string& name, int mb) {
  for (OpId id = 0; id < s.ops.size(); ++id)
    if (s.ops[id].kind == OpKind::send && s.ops[id].rank == r && s.name_of(s.ops[id]) == name &&
        s.ops[id].microbatch() == static_cast<std::uint32_t>(mb))
      return id;
  ADD_FAILURE() << "no " << name << " of mb " << mb << " on rank " << r;
  return 0;
}

// What a send was posted after: its one dependency, a compute op of the same rank.
engine::Op posted_after(const engine::Schedule& s, OpId send) {
  const auto deps = s.dependencies(s.ops[send]);
  EXPECT_EQ(deps.size(), 1u) << s.label(s.ops[send]);
  return s.ops[deps[0]];
}

// p = 4, m = 8: rank 0 (h = 0) runs near forwards 0 and 1 (step 1), then near 2 and far 4
// (step 2). dualpipe.py's step 2 appends the near forward's send after the far forward, so act 2
// leaves after forward 4's last layer; under `full` it leaves after its own.
TEST(DualPipeCalls, StepTwoHoldsANearForwardsSendPastTheFarForward) {
  const RunOutput out = run_dualpipe(4, 8, "");
  const auto& s = out.built.schedule;
  const engine::Op& held = posted_after(s, send_of(s, 0, "send act", 2));
  EXPECT_EQ(held.category, engine::Category::forward);
  EXPECT_EQ(held.microbatch(), 4u);
  const RunOutput full = run_dualpipe(4, 8, "full");
  EXPECT_EQ(posted_after(full.built.schedule, send_of(full.built.schedule, 0, "send act", 2))
                .microbatch(),
            2u);
}

// A full backward (dualpipe.py's _backward_chunk without zero bubble, and every F&B pair) sends
// its input gradient, and a pair its forward's activation too, after the chunk's weight
// gradients; a zero-bubble B (its W deferred) sends after its input gradients.
TEST(DualPipeCalls, AFullBackwardSendsAfterItsWeightGradients) {
  const int p = 4, m = 8;
  const RunOutput out = run_dualpipe(p, m, "");
  const auto& s = out.built.schedule;
  int full_backwards = 0, deferred = 0, pairs = 0;
  for (int r = 0; r < p; ++r) {
    const auto steps = dualpipe_order(r, p, m);
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const PipelineStep& b = steps[i];
      if (b.forward || b.weight) continue;
      // The backward of chunk 0 on rank 0, and of chunk 1 on rank p − 1, has no stage before.
      if ((b.chunk == 0 && r == 0) || (b.chunk == 1 && r == p - 1)) continue;
      const bool full = i + 1 < steps.size() && steps[i + 1].in_chunk_before;
      const engine::Op& after =
          posted_after(s, send_of(s, static_cast<engine::Rank>(r), "send grad", b.microbatch));
      EXPECT_EQ(ends_with(s.name_of(after), " bwd-w"), full)
          << "rank " << r << " B" << b.microbatch << " posted after " << s.label(after);
      EXPECT_EQ(after.microbatch(), static_cast<std::uint32_t>(b.microbatch));
      ++(full ? full_backwards : deferred);
      // The pair's forward sends after the same weight gradients.
      if (i > 0 && steps[i - 1].paired && steps[i - 1].forward) {
        const PipelineStep& f = steps[i - 1];
        if ((f.chunk == 0 && r == p - 1) || (f.chunk == 1 && r == 0)) continue;
        const engine::Op& fa =
            posted_after(s, send_of(s, static_cast<engine::Rank>(r), "send act", f.microbatch));
        EXPECT_TRUE(ends_with(s.name_of(fa), " bwd-w")) << s.label(fa);
        EXPECT_EQ(fa.microbatch(), static_cast<std::uint32_t>(b.microbatch));
        ++pairs;
      }
    }
  }
  EXPECT_GT(full_backwards, 0);
  EXPECT_GT(deferred, 0);
  EXPECT_GT(pairs, 0);
}

// Every send is waited for by the call after its chunk: some compute op of the same rank (the
// next chunk's first, or the optimizer step after the last) depends on it.
TEST(DualPipeCalls, TheChunkAfterASendWaitsForIt) {
  const RunOutput out = run_dualpipe(4, 8, "");
  const auto& s = out.built.schedule;
  std::vector<bool> waited(s.ops.size(), false);
  for (const engine::Op& op : s.ops)
    if (op.kind == OpKind::compute)
      for (const OpId d : s.dependencies(op))
        if (s.ops[d].kind == OpKind::send) waited[d] = true;
  int sends = 0;
  for (OpId id = 0; id < s.ops.size(); ++id)
    if (s.ops[id].kind == OpKind::send) {
      ++sends;
      EXPECT_TRUE(waited[id]) << s.label(s.ops[id]);
    }
  EXPECT_EQ(sends, 2 * 8 * 3);  // per direction 3 boundaries × 8 micro-batches, both ways
}

// With free transfers and F = B = W = T (T = 6 layers × 10 us on p = 4), the calls stall rank 0
// once. Rank 1, a middle rank, runs F0 F4 F1 F5 F2 from T on and holds F5's activation until its
// F2 has ended (dualpipe.py: step 2's last far forward does not send; step 4 sends it after its
// first near forward), at 6T. Rank 0 runs F0 F1 F2 F4 and B4 (its W deferred) by 5T; the call
// before W4 holds step 3's receive for F5 (`_recv_forward(1)` before `_weight_chunk`), so W4
// starts at 6T, not at 5T as with the transfers hidden. Rank 0 runs its 3m passes with two gaps
// of T, this one and Table 2's (test_dualpipe.cpp), and ends at (3m + 2)·T.
TEST(DualPipeCalls, TheMiddleRanksHeldSendStallsTheWBeforeIt) {
  const double T = 60e-6;
  for (const char* overlap : {"", "full"}) {
    SCOPED_TRACE(overlap);
    const RunOutput out = run_dualpipe(4, 8, overlap);
    const auto& s = out.built.schedule;
    const bool calls = *overlap == '\0';
    const OpId act5 = send_of(s, 1, "send act", 5);
    EXPECT_NEAR(out.timeline.launch[act5].seconds(), (calls ? 6 : 5) * T, 1e-9);
    OpId w4 = 0;
    for (OpId id = 0; id < s.ops.size(); ++id)
      if (s.ops[id].rank == 0 && ends_with(s.name_of(s.ops[id]), " bwd-w")) {
        w4 = id;
        break;
      }
    EXPECT_EQ(s.ops[w4].microbatch(), 4u);
    EXPECT_NEAR(out.timeline.start[w4].seconds(), (calls ? 6 : 5) * T, 1e-9);
    EXPECT_NEAR(out.result.iteration_time_s, (3 * 8 + (calls ? 2 : 1)) * T, 1e-9);
  }
}

// The first op of kind `kind` named `name` (or ending in it, `suffix`) for mb on rank r.
OpId first_op(const engine::Schedule& s, engine::Rank r, OpKind kind, const std::string& name,
              int mb, bool suffix = false) {
  for (OpId id = 0; id < s.ops.size(); ++id) {
    const engine::Op& op = s.ops[id];
    if (op.kind == kind && op.rank == r && op.microbatch() == static_cast<std::uint32_t>(mb) &&
        (suffix ? ends_with(s.name_of(op), name) : s.name_of(op) == name))
      return id;
  }
  ADD_FAILURE() << "no " << name << " of mb " << mb << " on rank " << r;
  return 0;
}
// The first forward compute op of micro-batch mb on rank r.
OpId first_forward(const engine::Schedule& s, engine::Rank r, int mb) {
  for (OpId id = 0; id < s.ops.size(); ++id) {
    const engine::Op& op = s.ops[id];
    if (op.kind == OpKind::compute && op.rank == r && op.category == engine::Category::forward &&
        op.microbatch() == static_cast<std::uint32_t>(mb))
      return id;
  }
  ADD_FAILURE() << "no forward of mb " << mb << " on rank " << r;
  return 0;
}
bool depends_on(const engine::Schedule& s, OpId op, OpId on) {
  for (const OpId d : s.dependencies(s.ops[op]))
    if (d == on) return true;
  return false;
}

// dualpipe.py's step 2 appends the next near forward's receive (`_recv_forward(0)`) before the far
// forward's `_forward_chunk(1)`, whose call waits for every op it commits. On p = 8, m = 16, rank 2
// (h = 2, near = forward direction) runs near forwards 2, 3, 4 and far forwards 8, 9, 10 in step
// 2: far forward 8 + i waits for near forward 3 + i's activation, and the last (10) for that of
// micro-batch 5, step 4's first near forward (`_forward_backward_chunk(0, 1, recv0=False)`).
TEST(DualPipeCalls, TheFarForwardsCallWaitsForTheNextNearForwardsReceive) {
  const RunOutput out = run_dualpipe(8, 16, "");
  const auto& s = out.built.schedule;
  for (int i = 0; i <= 2; ++i) {
    const OpId recv = first_op(s, 2, OpKind::recv, "recv act", 3 + i);
    EXPECT_TRUE(depends_on(s, first_forward(s, 2, 8 + i), recv)) << "far forward " << 8 + i;
    // ... and the near forward itself runs on that receive.
    EXPECT_TRUE(depends_on(s, first_forward(s, 2, 3 + i), recv)) << "near forward " << 3 + i;
  }
  // Under `full` a far forward waits for its own receive only.
  const RunOutput full = run_dualpipe(8, 16, "full");
  const auto& f = full.built.schedule;
  EXPECT_FALSE(depends_on(f, first_forward(f, 2, 8), first_op(f, 2, OpKind::recv, "recv act", 3)));
}

// Step 3 (`_backward_chunk(1, enable_zb=True)`, `_recv_forward(1)`, `_weight_chunk()`,
// `_forward_chunk(1, recv=False)`): the W's call posts the far forward's receive after the B and
// waits for it. On p = 4, rank 0 runs B4, W4, F5 there. Step 7 (`_weight_chunk()`,
// `_backward_chunk(0, enable_zb=True)`): the near B's receive is posted at its own call, after
// the W; on rank 0 that is B3's, after a W.
TEST(DualPipeCalls, AWsCallPostsTheNextForwardsReceiveAndTheBAfterItReceivesAfterIt) {
  const RunOutput out = run_dualpipe(4, 8, "");
  const auto& s = out.built.schedule;
  const OpId recv5 = first_op(s, 0, OpKind::recv, "recv act", 5);
  const OpId w4 = first_op(s, 0, OpKind::compute, " bwd-w", 4, true);
  EXPECT_TRUE(depends_on(s, w4, recv5));
  const auto posted = s.dependencies(s.ops[recv5]);
  ASSERT_EQ(posted.size(), 1u);
  EXPECT_EQ(s.ops[posted[0]].category, engine::Category::backward);
  EXPECT_EQ(s.ops[posted[0]].microbatch(), 4u);
  EXPECT_FALSE(ends_with(s.name_of(s.ops[posted[0]]), " bwd-w")) << s.label(s.ops[posted[0]]);

  const OpId recv3 = first_op(s, 0, OpKind::recv, "recv grad", 3);
  const auto after = s.dependencies(s.ops[recv3]);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_TRUE(ends_with(s.name_of(s.ops[after[0]]), " bwd-w")) << s.label(s.ops[after[0]]);
}

// `none` is what `auto` gives: dualpipe.py's calls all block.
TEST(DualPipeCalls, NoneIsItsOwnCalls) {
  EXPECT_EQ(run_dualpipe(4, 8, "none").result.iteration_time_s,
            run_dualpipe(4, 8, "").result.iteration_time_s);
}

}  // namespace
}  // namespace clustersim::models
