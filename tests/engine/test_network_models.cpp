// Network models driven directly (start / next_event_time / advance), against closed forms and
// hand-computed timelines.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <numeric>
#include <tuple>
#include <vector>

#include "engine/network/collectives.hpp"
#include "engine/network/network_model.hpp"
#include "tests/engine/run_flow.hpp"

namespace clustersim::engine {
namespace {

constexpr double kB = 10e9;  // bytes/s per direction

Topology single_switch(int n, Time link_latency) {
  Topology t;
  const VertexId sw = t.add_vertex(VertexKind::leaf_switch, "sw", -1);
  for (int i = 0; i < n; ++i) {
    const EndpointId g = t.add_gpu("gpu" + std::to_string(i), i);
    t.add_link(t.gpu_vertex(g), sw, Bandwidth::bytes_per_second(kB), link_latency, LinkKind::ib);
  }
  return t;
}

TransferPlan message(EndpointId src, EndpointId dst, Time latency = Time::zero()) {
  Phase phase;
  phase.latency = latency;
  phase.flows = {FlowSpec{src, dst, 1.0}};
  return TransferPlan{{phase}};
}

// Runs the model's events up to `until`, recording each transfer's completion time.
void run_until(NetworkModel& m, Time until, std::map<TransferId, Time>& done) {
  std::vector<TransferId> completed;
  for (Time t = m.next_event_time(); t <= until && t != Time::max(); t = m.next_event_time()) {
    completed.clear();
    m.advance(t, completed);
    for (TransferId id : completed)
      done[id] = t;
  }
}

std::map<TransferId, Time> run(NetworkModel& m) {
  std::map<TransferId, Time> done;
  run_until(m, Time::max(), done);
  return done;
}

double seconds_of(const std::map<TransferId, Time>& done, TransferId id) {
  return done.at(id).seconds();
}

Time one_collective(const std::string& kind, CollectiveType type, Algorithm algo, int n,
                    double bytes, Time link_latency) {
  const Topology t = single_switch(n, link_latency);
  const auto members = all_gpus(t);
  const TransferPlan plan = plan_collective(type, algo, members, 0, t);
  auto model = make_network_model(kind, t);
  model->start(1, plan, bytes, Time::zero());
  return run(*model).at(1);
}

// NCCL's ring latency with one GPU per node, Simple: 8.4 us + steps × 14 us (the hop latency
// is above the 2 us route).
double ring_latency(int steps) {
  return 8.4e-6 + steps * 14e-6;
}

TEST(FlowModel, RingAllReduceMatchesClosedForm) {
  // Ring all-reduce: NCCL's latency over 2(n-1) steps + 2(n-1)·S/(n·B).
  for (int n : {2, 4, 8, 16}) {
    for (double s : {1e6, 256e6}) {
      const double want = ring_latency(2 * (n - 1)) + 2.0 * (n - 1) * s / (n * kB);
      const Time got = one_collective("flow", CollectiveType::all_reduce, Algorithm::ring, n, s,
                                      Time::from_ps(1'000'000));
      EXPECT_NEAR(got.seconds(), want, 0.01 * want) << "n=" << n << " S=" << s;
    }
  }
}

TEST(FlowModel, RingAllGatherAndReduceScatterMatchClosedForm) {
  // NCCL's latency over (n-1) steps + (n-1)·S/(n·B), S the total gathered buffer.
  for (auto type : {CollectiveType::all_gather, CollectiveType::reduce_scatter}) {
    for (int n : {3, 8}) {
      const double s = 64e6;
      const double want = ring_latency(n - 1) + (n - 1) * s / (n * kB);
      const Time got =
          one_collective("flow", type, Algorithm::ring, n, s, Time::from_ps(1'000'000));
      EXPECT_NEAR(got.seconds(), want, 0.01 * want) << to_string(type) << " n=" << n;
    }
  }
}

TEST(FlowModel, DirectAllToAllOnOneSwitchMatchesClosedForm) {
  // Each GPU sends (n-1) chunks of S/n through its own uplink at B: (n-1)(α + S/(n·B)), plus
  // NCCL's send/receive parts (docs/network.md "All-to-all: send/receive parts"): every GPU is a
  // node of its own here, with no NIC, so a peer takes 1 channel, the 128 KiB network chunk, and
  // the first chunk of the (n-1) sends crosses one stage at its share of the uplink:
  // (n-1)·131072 B / B.
  const double alpha = 2e-6;
  for (int n : {4, 8}) {
    const double s = 32e6;
    const double want = (n - 1) * (alpha + s / (n * kB)) + (n - 1) * 131072.0 / kB;
    const Time got = one_collective("flow", CollectiveType::all_to_all, Algorithm::direct, n, s,
                                    Time::from_ps(1'000'000));
    EXPECT_NEAR(got.seconds(), want, 0.01 * want) << "n=" << n;
  }
}

TEST(NetworkModels, TwoFlowsOnOneLinkShareItInFlowOnly) {
  // GPUs 0 and 1 both send S = 1e9 bytes to GPU 2. flow: the link switch -> GPU 2 gives each
  // B/2, so both finish at 2S/B = 0.2 s. analytical ignores contention: S/B = 0.1 s each.
  const Topology t = single_switch(3, Time::zero());
  const TransferPlan a = message(0, 2), b = message(1, 2);
  for (auto [kind, want] : {std::pair{"flow", 0.2}, std::pair{"analytical", 0.1}}) {
    auto m = make_network_model(kind, t);
    m->start(1, a, 1e9, Time::zero());
    m->start(2, b, 1e9, Time::zero());
    const auto done = run(*m);
    EXPECT_NEAR(seconds_of(done, 1), want, 1e-9) << m->name();
    EXPECT_NEAR(seconds_of(done, 2), want, 1e-9) << m->name();
  }
}

TEST(FlowModel, LateFlowGetsItsFairShareFromItsStart) {
  // S = 1e9 bytes, B = 1e10 B/s. Flow A (0 -> 2) starts at 0 alone at B. Flow B (1 -> 2) starts
  // at 0.05 s, when A has S/2 left; both then run at B/2, so A ends at 0.05 + (S/2)/(B/2) =
  // 0.15 s. B has moved S/2 by then and finishes its last S/2 alone at B: 0.15 + 0.05 = 0.2 s.
  const Topology t = single_switch(3, Time::zero());
  auto m = make_network_model("flow", t);
  std::vector<std::tuple<LinkId, double, double>> rates;
  m->set_link_rate_sink(
      [&](LinkId l, Time at, double r) { rates.emplace_back(l, at.seconds(), r); });
  const TransferPlan a = message(0, 2), b = message(1, 2);
  std::map<TransferId, Time> done;
  m->start(1, a, 1e9, Time::zero());
  run_until(*m, Time::from_seconds(0.05), done);
  m->start(2, b, 1e9, Time::from_seconds(0.05));
  run_until(*m, Time::max(), done);
  EXPECT_NEAR(seconds_of(done, 1), 0.15, 1e-9);
  EXPECT_NEAR(seconds_of(done, 2), 0.2, 1e-9);
  // B's uplink (GPU 1 -> switch) reads B/2 from 0.05 s, B from 0.15 s, 0 from 0.2 s.
  const LinkId uplink_b = t.route(1, 2).front();
  std::vector<std::pair<double, double>> seen;
  for (auto [l, at, r] : rates) {
    if (l == uplink_b) seen.emplace_back(at, r);
  }
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_NEAR(seen[0].first, 0.05, 1e-9);
  EXPECT_DOUBLE_EQ(seen[0].second, kB / 2);
  EXPECT_NEAR(seen[1].first, 0.15, 1e-9);
  EXPECT_DOUBLE_EQ(seen[1].second, kB);
  EXPECT_NEAR(seen[2].first, 0.2, 1e-9);
  EXPECT_DOUBLE_EQ(seen[2].second, 0.0);
}

TEST(FlowModel, MaxMinGivesTheRestToTheUnconstrainedFlow) {
  // GPU 0's uplink is B/3; flows 0 -> 2 and 1 -> 2 share the link to GPU 2 (B). Max-min: the
  // first is held to B/3 by its uplink, the second takes the remaining 2B/3. With S = 1e9:
  // the second ends at S/(2B/3) = 0.15 s; the first stays at B/3 and ends at 3S/B = 0.3 s.
  Topology t;
  const VertexId sw = t.add_vertex(VertexKind::leaf_switch, "sw", -1);
  const double bws[] = {kB / 3, kB, kB};
  for (int i = 0; i < 3; ++i) {
    const EndpointId g = t.add_gpu("gpu", i);
    t.add_link(t.gpu_vertex(g), sw, Bandwidth::bytes_per_second(bws[i]), Time::zero(),
               LinkKind::ib);
  }
  auto m = make_network_model("flow", t);
  std::map<LinkId, double> first_rate;
  m->set_link_rate_sink([&](LinkId l, Time, double r) { first_rate.try_emplace(l, r); });
  const TransferPlan a = message(0, 2), b = message(1, 2);
  m->start(1, a, 1e9, Time::zero());
  m->start(2, b, 1e9, Time::zero());
  const auto done = run(*m);
  EXPECT_NEAR(seconds_of(done, 2), 0.15, 1e-9);
  EXPECT_NEAR(seconds_of(done, 1), 0.3, 1e-9);
  EXPECT_NEAR(first_rate.at(t.route(1, 2).front()), 2 * kB / 3, 1.0);
  EXPECT_NEAR(first_rate.at(t.route(0, 2).front()), kB / 3, 1.0);
}

TEST(FlowModel, UnsharedFlowsRunAtTheirNarrowestLinkOrCapThenShareFairly) {
  // GPU 0's uplink is B/4, every other link B; S = 1e9 bytes. A (0 -> 1) and D (2 -> 3, its
  // phase capped at B/10) start at 0 on links nobody else uses: A runs at B/4 and ends at
  // S/(B/4) = 0.4 s, D at B/10 and ends at S/(B/10) = 1.0 s. C (2 -> 1) joins at 0.1 s and
  // shares the switch -> GPU 1 link with A: max-min leaves A at B/4 (its uplink) and gives C
  // 3B/4 (its uplink is B, shared with D's cap of B/10, which leaves 9B/10), so C ends at
  // 0.1 + S/(3B/4) s and A still at 0.4 s.
  Topology t;
  const VertexId sw = t.add_vertex(VertexKind::leaf_switch, "sw", -1);
  const double bws[] = {kB / 4, kB, kB, kB};
  for (int i = 0; i < 4; ++i) {
    const EndpointId g = t.add_gpu("gpu", i);
    t.add_link(t.gpu_vertex(g), sw, Bandwidth::bytes_per_second(bws[i]), Time::zero(),
               LinkKind::ib);
  }
  auto m = make_network_model("flow", t);
  TransferPlan capped = message(2, 3);
  capped.phases[0].rate_cap = kB / 10;
  const TransferPlan a = message(0, 1), c = message(2, 1);
  std::map<TransferId, Time> done;
  m->start(1, a, 1e9, Time::zero());
  m->start(4, capped, 1e9, Time::zero());
  run_until(*m, Time::from_seconds(0.1), done);
  EXPECT_TRUE(done.empty());
  m->start(3, c, 1e9, Time::from_seconds(0.1));
  run_until(*m, Time::max(), done);
  EXPECT_NEAR(seconds_of(done, 1), 0.4, 1e-9);
  EXPECT_NEAR(seconds_of(done, 3), 0.1 + 1e9 / (0.75 * kB), 1e-9);
  EXPECT_NEAR(seconds_of(done, 4), 1.0, 1e-9);
}

TEST(FlowModel, AFlowReRatedAfterItsCompletionWasDueStillEndsAtItsNewTime) {
  // Links of B = 10 GB/s, S = 1e9 bytes. A (0 -> 1) and B (2 -> 3) start together on disjoint
  // links: both due at S/B = 0.1 s (their completions are pushed together). C (4 -> 1) joins at
  // 0.05 s and shares the switch -> GPU 1 link with A: A's remaining 0.5e9 bytes go at B/2 and
  // end at 0.15 s; C moves 0.5e9 bytes at B/2 by then and its other 0.5e9 at B, ending at 0.2 s.
  // B is untouched and still ends at 0.1 s.
  const Topology t = single_switch(5, Time::zero());
  auto m = make_network_model("flow", t);
  const TransferPlan a = message(0, 1), b = message(2, 3), c = message(4, 1);
  std::map<TransferId, Time> done;
  m->start(1, a, 1e9, Time::zero());
  m->start(2, b, 1e9, Time::zero());
  run_until(*m, Time::from_seconds(0.05), done);
  m->start(3, c, 1e9, Time::from_seconds(0.05));
  run_until(*m, Time::max(), done);
  ASSERT_EQ(done.size(), 3u);
  EXPECT_NEAR(seconds_of(done, 2), 0.1, 1e-9);
  EXPECT_NEAR(seconds_of(done, 1), 0.15, 1e-9);
  EXPECT_NEAR(seconds_of(done, 3), 0.2, 1e-9);
}

TEST(FlowModel, OversubscribedFatTreeHalvesCrossSpineFlows) {
  // Two leaves of 4 GPUs (NIC links B); each leaf's single trunk to the spine is 2B, half the
  // leaf's 4B of NIC capacity (2:1). All 8 GPUs send S across the spine: 4 flows share each
  // 2B trunk direction, B/2 each, so every flow takes S/(B/2) = 2 × 1e9 / 1e10 = 0.2 s.
  Topology t;
  const VertexId spine = t.add_vertex(VertexKind::spine_switch, "spine", -1);
  for (int leaf = 0; leaf < 2; ++leaf) {
    const VertexId l = t.add_vertex(VertexKind::leaf_switch, "leaf", -1);
    t.add_link(l, spine, Bandwidth::bytes_per_second(2 * kB), Time::zero(), LinkKind::ib);
    for (int g = 0; g < 4; ++g) {
      const EndpointId e = t.add_gpu("gpu", leaf * 4 + g);
      t.add_link(t.gpu_vertex(e), l, Bandwidth::bytes_per_second(kB), Time::zero(), LinkKind::ib);
    }
  }
  auto m = make_network_model("flow", t);
  std::vector<TransferPlan> plans;
  for (EndpointId i = 0; i < 8; ++i)
    plans.push_back(message(i, (i + 4) % 8));
  for (EndpointId i = 0; i < 8; ++i)
    m->start(i, plans[i], 1e9, Time::zero());
  const auto done = run(*m);
  ASSERT_EQ(done.size(), 8u);
  for (EndpointId i = 0; i < 8; ++i)
    EXPECT_NEAR(seconds_of(done, i), 0.2, 1e-9);
}

TEST(FlowModel, SimultaneousCompletionsComeOutTogetherInIdOrder) {
  // Three identical messages on disjoint links end at the same instant: one advance() reports
  // them all, ascending by id whatever the start order.
  const Topology t = single_switch(6, Time::zero());
  auto m = make_network_model("flow", t);
  const TransferPlan a = message(0, 1), b = message(2, 3), c = message(4, 5);
  m->start(7, a, 1e6, Time::zero());
  m->start(3, b, 1e6, Time::zero());
  m->start(5, c, 1e6, Time::zero());
  std::vector<TransferId> completed;
  m->advance(m->next_event_time(), completed);  // flows join
  EXPECT_TRUE(completed.empty());
  m->advance(m->next_event_time(), completed);
  EXPECT_EQ(completed, (std::vector<TransferId>{3, 5, 7}));
  EXPECT_EQ(m->next_event_time(), Time::max());
}

TEST(FlowModel, LargeRingFinishesInOneBatch) {
  // A 1,024-rank ring all-reduce: the latency event starts all 1,024 flows, and since every
  // flow has the same rate and bytes they all end in one advance(): two calls in total.
  const int n = 1024;
  const Topology t = single_switch(n, Time::from_ps(1000));
  const auto members = all_gpus(t);
  const TransferPlan plan =
      plan_collective(CollectiveType::all_reduce, Algorithm::ring, members, 0, t);
  auto m = make_network_model("flow", t);
  m->start(1, plan, 1e8, Time::zero());
  int calls = 0;
  std::vector<TransferId> completed;
  while (m->next_event_time() != Time::max()) {
    m->advance(m->next_event_time(), completed);
    ++calls;
  }
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(completed, std::vector<TransferId>{1});
}

TEST(FlowModel, LinkBytesCountRingTraffic) {
  // Ring all-reduce on 4 GPUs: each uplink carries 2(n-1)/n · S = 1.5 × 1e6 bytes.
  const Topology t = single_switch(4, Time::zero());
  const auto members = all_gpus(t);
  const TransferPlan plan =
      plan_collective(CollectiveType::all_reduce, Algorithm::ring, members, 0, t);
  for (auto kind : {"flow", "analytical"}) {
    auto m = make_network_model(kind, t);
    m->start(1, plan, 1e6, Time::zero());
    run(*m);
    for (EndpointId g = 0; g < 4; ++g) {
      EXPECT_DOUBLE_EQ(m->link_bytes().at(t.route(g, (g + 1) % 4).front()), 1.5e6);
    }
  }
}

TEST(NetworkModels, AnalyticalAgreesWithFlowWithoutContention) {
  // Ring plans on one switch put one flow on each link, so max-min changes nothing.
  for (auto type :
       {CollectiveType::all_reduce, CollectiveType::all_gather, CollectiveType::broadcast}) {
    for (double s : {1e4, 1e8}) {
      const Time flow =
          one_collective("flow", type, Algorithm::ring, 8, s, Time::from_ps(2'000'000));
      const Time ana =
          one_collective("analytical", type, Algorithm::ring, 8, s, Time::from_ps(2'000'000));
      EXPECT_NEAR(ana.seconds(), flow.seconds(), 0.02 * flow.seconds()) << to_string(type);
    }
  }
}

TEST(NetworkModels, AnalyticalReportsLinkRates) {
  // One message of S = 1e9 at B after a 1 us latency: its links read B from 1 us and 0 from
  // 1 us + 0.1 s.
  const Topology t = single_switch(2, Time::zero());
  auto m = make_network_model("analytical", t);
  std::vector<std::pair<double, double>> seen;
  const LinkId up = t.route(0, 1).front();
  m->set_link_rate_sink([&](LinkId l, Time at, double r) {
    if (l == up) seen.emplace_back(at.seconds(), r);
  });
  const TransferPlan a = message(0, 1, Time::from_ps(1'000'000));
  m->start(1, a, 1e9, Time::zero());
  run(*m);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_NEAR(seen[0].first, 1e-6, 1e-12);
  EXPECT_DOUBLE_EQ(seen[0].second, kB);
  EXPECT_NEAR(seen[1].first, 0.1 + 1e-6, 1e-12);
  EXPECT_DOUBLE_EQ(seen[1].second, 0.0);
}

TEST(NetworkModels, IdealMakesCommunicationFree) {
  const Topology t = single_switch(4, Time::from_ps(1'000'000));
  const auto members = all_gpus(t);
  const TransferPlan plan =
      plan_collective(CollectiveType::all_reduce, Algorithm::ring, members, 0, t);
  auto m = make_network_model("ideal", t);
  const Time at = Time::from_seconds(3.0);
  m->start(2, plan, 1e9, at);
  m->start(1, plan, 1e9, at);
  EXPECT_EQ(m->next_event_time(), at);
  std::vector<TransferId> completed;
  m->advance(at, completed);
  EXPECT_EQ(completed, (std::vector<TransferId>{1, 2}));
  EXPECT_EQ(m->next_event_time(), Time::max());
}

TEST(NetworkModels, EmptyPlansCompleteAtTheirStart) {
  const Topology t = single_switch(2, Time::zero());
  const TransferPlan empty;
  for (auto kind : {"flow", "analytical", "ideal"}) {
    auto m = make_network_model(kind, t);
    m->start(4, empty, 1e9, Time::from_ps(5));
    const auto done = run(*m);
    EXPECT_EQ(done.at(4), Time::from_ps(5)) << m->name();
  }
}

// A network model finds a plan's routes again through the slot it wrote into the plan
// (TransferPlan::route_slot). A copy, or a plan assigned to, carries no slot: changed flows get
// their own routes. Two models started on one plan each keep their own. GPU 2 hangs off the
// switch at half the bandwidth, so a route's narrowest link tells the routes apart: 1 GB takes
// 0.1 s to GPU 1 and 0.2 s to GPU 2.
TEST(FlowModel, APlansRoutesFollowItsFlowsThroughCopiesAndAcrossModels) {
  Topology t;
  const VertexId sw = t.add_vertex(VertexKind::leaf_switch, "sw", -1);
  for (int i = 0; i < 3; ++i) {
    const EndpointId g = t.add_gpu("gpu" + std::to_string(i), i);
    t.add_link(t.gpu_vertex(g), sw, Bandwidth::bytes_per_second(i == 2 ? kB / 2 : kB), Time::zero(),
               LinkKind::ib);
  }
  const auto seconds_for = [](NetworkModel& m, const TransferPlan& p) {
    m.start(1, p, 1e9, Time::zero());
    return run(m).at(1).seconds();
  };
  const auto m1 = make_network_model("flow", t);
  const auto m2 = make_network_model("flow", t);
  const TransferPlan to1 = message(0, 1);
  EXPECT_DOUBLE_EQ(seconds_for(*m1, to1), 0.1);
  EXPECT_DOUBLE_EQ(seconds_for(*m1, to1), 0.1);  // found through its slot
  EXPECT_DOUBLE_EQ(seconds_for(*m2, to1), 0.1);  // another model: its own routes
  TransferPlan to2 = to1;                        // a copy, then changed
  to2.phases[0].flows[0].dst = 2;
  EXPECT_DOUBLE_EQ(seconds_for(*m1, to2), 0.2);
  EXPECT_DOUBLE_EQ(seconds_for(*m1, to1), 0.1);  // the original keeps its routes
  TransferPlan reused = to1;
  EXPECT_DOUBLE_EQ(seconds_for(*m2, reused), 0.1);
  reused = to2;  // assigned: the flows of to2, whatever slot `reused` had
  EXPECT_DOUBLE_EQ(seconds_for(*m2, reused), 0.2);
  EXPECT_DOUBLE_EQ(seconds_for(*m1, to1), 0.1);
}

}  // namespace
}  // namespace clustersim::engine
