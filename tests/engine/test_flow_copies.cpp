// A transfer with copies (NetworkModel::start_with_copies): a folded run's carried images run as
// part of their original on the flow model. On a star of 1 GB/s cables without latency, where
// every time is bytes over a rate worked out by hand.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "engine/network/network_model.hpp"
#include "tests/engine/run_flow.hpp"

namespace clustersim::engine {
namespace {

constexpr double kCopyGB = 1e9;

// GPU i hangs off one switch by a 1 GB/s link each way.
Topology copy_star(std::size_t gpus) {
  Topology t;
  const VertexId sw = t.add_vertex(VertexKind::leaf_switch, "sw", -1);
  for (std::size_t i = 0; i < gpus; ++i) {
    const EndpointId g = t.add_gpu("gpu" + std::to_string(i), static_cast<int>(i));
    t.add_link(t.gpu_vertex(g), sw, Bandwidth::bytes_per_second(kCopyGB), Time::zero(),
               LinkKind::ib);
  }
  return t;
}

// One phase per hop: `hops` {a, b} moves the whole payload from a to b, one hop after the other.
TransferPlan hops_plan(const std::vector<std::pair<EndpointId, EndpointId>>& hops) {
  TransferPlan plan;
  for (const auto& [a, b] : hops) {
    Phase phase;
    phase.flows = {FlowSpec{a, b, 1.0}};
    plan.phases.push_back(phase);
  }
  return plan;
}

// Two phases, 0 → 1 then 1 → 0, with a copy 2 → 3 then 3 → 2: each phase 1 GB at 1 GB/s, so the
// transfer ends at 2 s, as alone, reported once under its own id; each copy link carried 1 GB.
TEST(FlowCopies, ACopyOnLinksOfItsOwnEndsWithItsTransferAndLoadsItsLinks) {
  const Topology t = copy_star(4);
  const TransferPlan own = hops_plan({{0, 1}, {1, 0}});
  const TransferPlan copy = hops_plan({{2, 3}, {3, 2}});
  const TransferPlan* copies[] = {&copy};
  auto m = make_network_model("flow", t);
  ASSERT_TRUE(m->carries_copies());
  m->start_with_copies(7, own, kCopyGB, Time::zero(), copies);
  const auto done = run_until_idle(*m);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_DOUBLE_EQ(done.at(7), 2.0);
  for (const auto& [a, b] : {std::pair{2, 3}, std::pair{3, 2}})
    for (LinkId l : t.route(static_cast<EndpointId>(a), static_cast<EndpointId>(b)))
      EXPECT_DOUBLE_EQ(m->link_bytes()[l], kCopyGB) << t.link(l).name;
}

// The copy 2 → 3 shares GPU 2's uplink with another transfer 2 → 0 (1 GB): 0.5 GB/s each, while
// the own flow 0 → 1 runs alone at 1 GB/s and ends at 1 s. The copy would end at 2 s: it is not
// its original's image any more, and the model says so when the phase ends, with both ends.
TEST(FlowCopies, ACopyThatMeetsOtherTrafficDivergesAndSaysWhen) {
  const Topology t = copy_star(4);
  const TransferPlan own = hops_plan({{0, 1}});
  const TransferPlan copy = hops_plan({{2, 3}});
  const TransferPlan other = hops_plan({{2, 0}});
  const TransferPlan* copies[] = {&copy};
  auto m = make_network_model("flow", t);
  m->start_with_copies(7, own, kCopyGB, Time::zero(), copies);
  m->start(8, other, kCopyGB, Time::zero());
  try {
    run_until_idle(*m);
    ADD_FAILURE() << "the copy's divergence went unnoticed";
  } catch (const CopyDiverged& e) {
    EXPECT_EQ(e.id, 7u);
    EXPECT_DOUBLE_EQ(e.own_end.seconds(), 1.0);
    EXPECT_DOUBLE_EQ(e.copy_end.seconds(), 2.0);
  }
}

}  // namespace
}  // namespace clustersim::engine
