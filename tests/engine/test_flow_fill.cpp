// The flow model's progressive filling (engine/network/flow_model.cpp, fill()) on hand-made
// cases whose max-min rates are worked out by hand: bottlenecks whose shares grow as the flows
// of earlier bottlenecks are fixed, which the heap must still take in order of their share.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "engine/network/network_model.hpp"

namespace clustersim::engine {
namespace {

constexpr double kFillUnit = 1e9;  // bytes/s

// One switch; GPU i hangs off it by a link of bws[i] × kFillUnit each way.
Topology fill_star(const std::vector<double>& bws) {
  Topology t;
  const VertexId sw = t.add_vertex(VertexKind::leaf_switch, "sw", -1);
  for (std::size_t i = 0; i < bws.size(); ++i) {
    const EndpointId g = t.add_gpu("gpu" + std::to_string(i), static_cast<int>(i));
    t.add_link(t.gpu_vertex(g), sw, Bandwidth::bytes_per_second(bws[i] * kFillUnit), Time::zero(),
               LinkKind::ib);
  }
  return t;
}

TransferPlan fill_message(EndpointId src, EndpointId dst, double cap = 0.0) {
  Phase phase;
  phase.flows = {FlowSpec{src, dst, 1.0}};
  phase.rate_cap = cap;
  return TransferPlan{{phase}};
}

std::map<TransferId, double> fill_run(NetworkModel& m) {
  std::map<TransferId, double> done;
  std::vector<TransferId> completed;
  for (Time t = m.next_event_time(); t != Time::max(); t = m.next_event_time()) {
    completed.clear();
    m.advance(t, completed);
    for (TransferId id : completed)
      done[id] = t.seconds();
  }
  return done;
}

TEST(FlowFill, SharesThatGrowAsEarlierBottlenecksAreFixedAreTakenInOrder) {
  // GPUs X, Q, R, P, W, V with links of 10, 4, 9, 100, 100, 100 units (u = 1 GB/s); one flow of
  // S = 1 GB per transfer, all starting at 0:
  //   1: P -> X, 2: Q -> X, 3: Q -> W, 4: R -> X, 5: R -> V.
  // Fair shares: X's downlink 10/3, Q's uplink 4/2 = 2, R's uplink 9/2 = 4.5. Q's uplink is the
  // bottleneck: flows 2 and 3 at 2u. X's downlink's share grows to (10 − 2)/2 = 4 < 4.5: flows
  // 1 and 4 at 4u. R's uplink's share grows to 9 − 4 = 5: flow 5 at 5u. So 5 ends at
  // S/5u = 0.2 s; 1 and 4 at 0.25 s (no rate changes when 5 ends: 4 stays held by X at
  // (10 − 2)/2); 2 and 3 at 0.5 s. Taking X at its first share (10/3) would end 1 and 4 at
  // 0.3 s; not queuing R's grown share again would leave flow 5 without a rate.
  const Topology t = fill_star({10, 4, 9, 100, 100, 100});
  enum : EndpointId { X, Q, R, P, W, V };
  auto m = make_network_model("flow", t);
  const TransferPlan p1 = fill_message(P, X), p2 = fill_message(Q, X), p3 = fill_message(Q, W),
                     p4 = fill_message(R, X), p5 = fill_message(R, V);
  m->start(1, p1, 1e9, Time::zero());
  m->start(2, p2, 1e9, Time::zero());
  m->start(3, p3, 1e9, Time::zero());
  m->start(4, p4, 1e9, Time::zero());
  m->start(5, p5, 1e9, Time::zero());
  const auto done = fill_run(*m);
  ASSERT_EQ(done.size(), 5u);
  EXPECT_NEAR(done.at(5), 0.2, 1e-9);
  EXPECT_NEAR(done.at(1), 0.25, 1e-9);
  EXPECT_NEAR(done.at(4), 0.25, 1e-9);
  EXPECT_NEAR(done.at(2), 0.5, 1e-9);
  EXPECT_NEAR(done.at(3), 0.5, 1e-9);
}

TEST(FlowFill, ACapFixedFirstRaisesTheShareOfItsLinkForTheOthers) {
  // GPUs A, B, C, D with links of 12, 100, 100, 100 units; flows 1: B -> A capped at 2u,
  // 2: C -> A, 3: D -> A, each S = 1 GB. A's downlink: share 12/3 = 4, but the cap (2) is
  // smaller: flow 1 at 2u, and A's share grows to (12 − 2)/2 = 5 for flows 2 and 3. So 2 and 3
  // end at 0.2 s; then flow 1 alone still runs at its cap and ends at S/2u = 0.5 s.
  const Topology t = fill_star({12, 100, 100, 100});
  enum : EndpointId { A, B, C, D };
  auto m = make_network_model("flow", t);
  const TransferPlan capped = fill_message(B, A, 2 * kFillUnit), p2 = fill_message(C, A),
                     p3 = fill_message(D, A);
  m->start(1, capped, 1e9, Time::zero());
  m->start(2, p2, 1e9, Time::zero());
  m->start(3, p3, 1e9, Time::zero());
  const auto done = fill_run(*m);
  ASSERT_EQ(done.size(), 3u);
  EXPECT_NEAR(done.at(2), 0.2, 1e-9);
  EXPECT_NEAR(done.at(3), 0.2, 1e-9);
  EXPECT_NEAR(done.at(1), 0.5, 1e-9);
}

}  // namespace
}  // namespace clustersim::engine
