// A folded run checked by the network (SimulationOptions::carry_replica_images): each transfer
// inside the simulated replica is also carried on every other replica's links, so the flow
// model sees the whole run's traffic, and a replica whose copy ends at another instant refuses
// the fold (FoldNotExact). Checked against the unfolded run of the same schedule on the flow
// model, and against hand-computed times on links whose rates make the arithmetic exact.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "engine/network/collectives.hpp"
#include "engine/network/network_model.hpp"
#include "engine/replica_images.hpp"
#include "engine/simulator.hpp"
#include "tests/engine/fake_models.hpp"

namespace clustersim::engine {
namespace {

using fakes::OneTeraflop;

constexpr std::uint64_t kOneGB = 1'000'000'000;

// GPU i on its own node, joined to one switch by a cable of `gbps[i]` GB/s each way, no latency.
Topology star_of_cables(const std::vector<double>& gbps) {
  Topology t;
  const VertexId sw = t.add_vertex(VertexKind::leaf_switch, "sw", 0);
  for (std::size_t i = 0; i < gbps.size(); ++i) {
    const int node = static_cast<int>(i);
    t.add_gpu("gpu" + std::to_string(i), node);
    t.add_link(t.gpu_vertex(static_cast<EndpointId>(i)), sw,
               Bandwidth::gigabytes_per_second(gbps[i]), Time::zero(), LinkKind::ib);
  }
  return t;
}

struct Ops {
  OpId send = kNone;
  OpId recv = kNone;
  OpId all_reduce = kNone;
};

// Two replicas of a two-stage pipeline: ranks {0, 1} and {2, 3}, stage s of replica k is rank
// 2k + s. Stage 0 computes for 1 s and sends 1 GB to stage 1; then each stage all-reduces 1 GB
// with its counterpart in the other replica (dp groups {0, 2} and {1, 3}). Folded, ranks 2 and 3
// mirror 0 and 1. Returns replica 0's ops.
Schedule pipeline_pair(bool folded, Ops& ops) {
  ScheduleBuilder b(4);
  if (folded) b.fold({0, 1, 0, 1});
  const auto compute = b.stream("compute");
  const auto comm = b.stream("comm");
  const GroupId dp0 = b.add_group({0, 2}, "dp[0]");
  const GroupId dp1 = b.add_group({1, 3}, "dp[1]");
  for (Rank first : {Rank{0}, Rank{2}}) {
    if (folded && first != 0) break;
    const Rank second = first + 1;
    const OpId work = b.compute({first, compute, Category::forward, "fwd"}, 1e12, 0);
    const OpId after_work[] = {work};
    const OpId send =
        b.send({first, comm, Category::pp_comm, "send act", kNone, after_work}, second, kOneGB, 0);
    const OpId recv = b.recv({second, comm, Category::pp_comm, "recv act"}, first, kOneGB, 0);
    const OpId after_send[] = {send};
    const OpId after_recv[] = {recv};
    const OpId ar0 = b.collective({first, comm, Category::dp_comm, "ar", kNone, after_send},
                                  CollectiveType::all_reduce, dp0, kOneGB);
    b.collective({second, comm, Category::dp_comm, "ar", kNone, after_recv},
                 CollectiveType::all_reduce, dp1, kOneGB);
    if (first == 0) ops = {send, recv, ar0};
  }
  return std::move(b).finish();
}

// The pair folded and whole on a star of `gbps`, replica 0's ops of each.
struct Pair {
  explicit Pair(const std::vector<double>& gbps)
      : t(star_of_cables(gbps)), folded(pipeline_pair(true, f)), whole(pipeline_pair(false, w)) {}
  Ops f{}, w{};
  Topology t;
  Schedule folded, whole;
};

// A send between GPUs of two nodes moves in 128 KiB chunks through a sender and a receiver stage
// (NCCL_P2P_NET_CHUNKSIZE; docs/network.md "Sends"): its first chunk crosses one stage, on its one
// channel at the cable's rate, before the cables run full. 131 µs at 1 GB/s.
double send_fill(double gbps) {
  return 131072.0 / (gbps * 1e9);
}

Timeline run_on_flow(const Schedule& s, const Topology& t, bool images) {
  auto network = make_network_model("flow", t);
  OneTeraflop compute;
  SimulationOptions options;
  options.carry_replica_images = images;
  return simulate(s, t, *network, compute, options);
}

TEST(ReplicaImages, TheKthImageOfARankIsTheKthRankMirroringIt) {
  ScheduleBuilder b(6);
  b.fold({0, 1, 0, 1, 0, 1});
  b.add_group({0, 1}, "tp[0]");
  b.add_group({0, 2, 4}, "dp[0]");
  const Schedule s = std::move(b).finish();
  const ReplicaImages images(s);
  EXPECT_EQ(images.replicas(), 3u);
  EXPECT_EQ(images.image(0, 1), 2u);
  EXPECT_EQ(images.image(0, 2), 4u);
  EXPECT_EQ(images.image(1, 1), 3u);
  EXPECT_EQ(images.image(1, 2), 5u);
  EXPECT_TRUE(images.local(0));   // inside replica 0: its transfers have images
  EXPECT_FALSE(images.local(1));  // spans the replicas: carried whole already
  ScheduleBuilder uneven(3);
  uneven.fold({0, 1, 0});  // rank 0 stands for two replicas, rank 1 for one
  EXPECT_THROW(ReplicaImages{std::move(uneven).finish()}, std::invalid_argument);
}

// Which images must be carried, on the star: replica 0's send 0 → 1 (image 2 → 3) runs on its
// own cables and goes uncarried, until a cross-replica flow 0 → 2 shares GPU 0's cable with it;
// a slower cable under its image carries it too (not its own shape).
TEST(ReplicaImages, OnlyImagesThatCanMeetOtherTrafficAreCarried) {
  const auto send = [](const Topology& t, EndpointId a, EndpointId b) {
    const EndpointId m[] = {a, b};
    return plan_collective(CollectiveType::send_recv, Algorithm::direct, m, 0, t);
  };
  const auto direct_flow = [](EndpointId a, EndpointId b) {
    Phase phase;
    phase.flows.push_back({a, b, 1.0});
    TransferPlan plan;
    plan.phases.push_back(std::move(phase));
    return plan;
  };
  const Topology t = star_of_cables({1, 1, 1, 1});
  const TransferPlan s01 = send(t, 0, 1), s23 = send(t, 2, 3), cross = direct_flow(0, 2);
  const TransferPlan cross_elsewhere = direct_flow(1, 3);  // into GPU 3: meets the image
  const ReplicaCall local{&s01, 1e9, true, {&s23}};
  EXPECT_EQ(images_to_carry({local}, t), std::vector<std::uint8_t>({0}));
  EXPECT_EQ(images_to_carry({local, {&cross, 1e9, false, {}}}, t),
            std::vector<std::uint8_t>({1, 0}));
  EXPECT_EQ(images_to_carry({local, {&cross_elsewhere, 1e9, false, {}}}, t),
            std::vector<std::uint8_t>({1, 0}));
  const Topology slow = star_of_cables({1, 1, 1, 0.5});
  const TransferPlan s01_slow = send(slow, 0, 1), s23_slow = send(slow, 2, 3);
  EXPECT_EQ(images_to_carry({{&s01_slow, 1e9, true, {&s23_slow}}}, slow),
            std::vector<std::uint8_t>({1}));
}

// Alike replicas: the folded run carries the other replica's send on its own links and gives
// the whole run's times and link bytes. By hand: each send runs alone on its cables at 1 GB/s,
// [1, 2] s after its fill; the all-reduces then share the cables as the flow model's plans say, in
// both runs.
TEST(ReplicaImages, AlikeReplicasGiveTheWholeRunsTimesAndLinkLoads) {
  const Pair p({1, 1, 1, 1});
  const auto& [f, w, t, folded, whole] = p;
  const Timeline tf = run_on_flow(folded, t, true);
  const Timeline tw = run_on_flow(whole, t, false);
  EXPECT_NEAR(tf.end[f.send].seconds(), 2.0 + send_fill(1), 1e-9);  // 1 s, then 1 GB at 1 GB/s
  EXPECT_EQ(tf.end[f.send], tw.end[w.send]);
  EXPECT_EQ(tf.end[f.recv], tw.end[w.recv]);
  EXPECT_EQ(tf.end[f.all_reduce], tw.end[w.all_reduce]);
  EXPECT_EQ(tf.makespan, tw.makespan);
  ASSERT_EQ(tf.link_bytes.size(), tw.link_bytes.size());
  for (std::size_t l = 0; l < tw.link_bytes.size(); ++l)
    EXPECT_NEAR(tf.link_bytes[l], tw.link_bytes[l], 1e-6 * tw.link_bytes[l]) << "link " << l;
  // Replica 1's send crossed gpu2's cable: 1 GB of it besides its all-reduce's bytes, which a
  // fold without images leaves out.
  const Timeline bare = run_on_flow(folded, t, false);
  const LinkId gpu2_up = t.route(2, 3).front();
  EXPECT_NEAR(tf.link_bytes[gpu2_up] - bare.link_bytes[gpu2_up], 1e9, 1.0);
}

// A slow cable on replica 1's second stage: its send takes 2 s where replica 0's takes 1 s (each
// after its fill). The
// whole run shows it; the checked fold refuses instead of answering with replica 0's times.
TEST(ReplicaImages, AReplicaOnASlowerLinkRefusesTheFold) {
  const Pair p({1, 1, 1, 0.5});
  const auto& [f, w, t, folded, whole] = p;
  const Timeline tw = run_on_flow(whole, t, false);
  EXPECT_NEAR(tw.end[w.send].seconds(), 2.0 + send_fill(1), 1e-9);
  const OpId replica1_send = w.send + 5;  // replica 1's five ops follow replica 0's
  ASSERT_EQ(whole.name_of(whole.ops[replica1_send]), "send act");
  // 1 GB at 0.5 GB/s after 1 s, and a chunk's fill at 0.5 GB/s.
  EXPECT_NEAR(tw.end[replica1_send].seconds(), 3.0 + send_fill(0.5), 1e-9);
  try {
    run_on_flow(folded, t, true);
    ADD_FAILURE() << "the fold was not refused";
  } catch (const FoldNotExact& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("send act"), std::string::npos) << what;
    // Replica 1's copy ends later than 3 s: the fold started the all-reduce of {0, 2} at rank 0's
    // 2 s, and its flow out of GPU 2 slowed the copy down; the message gives rank 0's own end.
    EXPECT_NE(what.find("rank 0's at 2.000131 s"), std::string::npos) << what;
  }
  // A fold without the check answers replica 0's 2 s for every replica.
  EXPECT_NEAR(run_on_flow(folded, t, false).end[f.send].seconds(), 2.0 + send_fill(1), 1e-9);
}

}  // namespace
}  // namespace clustersim::engine
