// Compute that shares the SMs with an overlapping collective (engine/sm_sharing.hpp), on
// hand-computed timelines. The fake compute model below runs a kernel list at half pace while
// communication holds any SM (kHalfPace), so an op's end follows from the share of its work done
// at each pace; transfers take their payload at 1 GB/s (fake_models.hpp).
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "engine/simulator.hpp"
#include "engine/topology_builders.hpp"
#include "tests/engine/fake_models.hpp"

namespace clustersim::engine {
namespace {

using namespace fakes;

// Kernel list i lasts i + 1 seconds on the whole GPU and twice that with any SM held.
class HalfPaceWhileHeld : public OneTeraflop {
 public:
  std::vector<Time> kernel_list_durations(const KernelTable& table) const override {
    std::vector<Time> out;
    for (std::size_t i = 0; i < table.size(); ++i)
      out.push_back(Time::from_seconds(static_cast<double>(i + 1)));
    return out;
  }
  bool models_sm_sharing() const override { return true; }
  std::vector<Time> kernel_list_durations_sharing(const KernelTable& table,
                                                  std::uint32_t sms_held) const override {
    held_counts.push_back(sms_held);
    std::vector<Time> out = kernel_list_durations(table);
    for (Time& t : out)
      t = t * 2;
    return out;
  }
  mutable std::vector<std::uint32_t> held_counts;
};

// A list of one memory kernel per duration wanted: list i lasts i + 1 s under the fake model.
std::vector<std::uint32_t> lists(ScheduleBuilder& b, int n) {
  std::vector<std::uint32_t> out;
  for (int i = 0; i < n; ++i) {
    Kernel k;
    k.kind = KernelKind::memory;
    k.bytes = static_cast<double>(i + 1);
    out.push_back(b.kernel_table().intern(std::vector<Kernel>{k}));
  }
  return out;
}

using SmSharingTest = SimulatorFixture<HalfPaceWhileHeld>;

// Rank r: a 4 s op (list 3) on "compute" from 0 s; a 1 s op without a list on "other"; after
// it, a 2 GB all-reduce (2 s) on "comm", so the collective moves data over [1, 3] s. The 4 s op
// does 1 s of work alone, 2 s × 1/2 = 1 s while held, and its last 2 s alone: it ends at 5 s.
TEST_F(SmSharingTest, AnOverlappedOpRunsAtTheSharedPaceOnlyWhileTheCollectiveMovesData) {
  ScheduleBuilder b(3);
  const auto compute_s = b.stream("compute");
  const auto other = b.stream("other");
  const auto comm = b.stream("comm");
  const auto l = lists(b, 4);
  const GroupId g = b.add_group({0, 1}, "dp");
  OpId work[3], side[2], ar[2];
  for (Rank r = 0; r < 3; ++r) {
    work[r] = b.compute({r, compute_s, Category::backward, "bwd"}, 1, 0, 0, l[3]);
    if (r == 2) break;  // rank 2 is in no group: nothing holds its SMs
    side[r] = b.compute({r, other, Category::backward, "side"}, 1e12, 0);  // 1 s, no list
    const OpId deps[] = {side[r]};
    ar[r] = b.collective({r, comm, Category::dp_comm, "ar", kNone, deps},
                         CollectiveType::all_reduce, g, 2'000'000'000);
  }
  const auto tl = run(std::move(b).finish(), 3);
  for (Rank r = 0; r < 2; ++r) {
    EXPECT_DOUBLE_EQ(sec(tl.launch[ar[r]]), 1.0);
    EXPECT_DOUBLE_EQ(sec(tl.end[ar[r]]), 3.0);
    EXPECT_DOUBLE_EQ(sec(tl.end[side[r]]), 1.0);  // costed by FLOPs: its pace never changes
    EXPECT_DOUBLE_EQ(sec(tl.start[work[r]]), 0.0);
    EXPECT_DOUBLE_EQ(sec(tl.end[work[r]]), 5.0);
  }
  EXPECT_DOUBLE_EQ(sec(tl.end[work[2]]), 4.0);
  EXPECT_DOUBLE_EQ(sec(tl.makespan), 5.0);
  ASSERT_FALSE(compute.held_counts.empty());
  EXPECT_GT(compute.held_counts.front(), 0u);
}

// An op that starts while the collective runs begins at the shared pace: a 2 s op (list 1)
// starting at 1.5 s, collective over [1, 3] s: 1.5 s at half pace does 0.75 s of work, the
// remaining 1.25 s run alone: it ends at 4.25 s. The op after it on the stream starts then.
TEST_F(SmSharingTest, AnOpStartedDuringTheCollectiveStartsAtTheSharedPace) {
  ScheduleBuilder b(2);
  const auto compute_s = b.stream("compute");
  const auto other = b.stream("other");
  const auto comm = b.stream("comm");
  const auto l = lists(b, 2);
  const GroupId g = b.add_group({0, 1}, "dp");
  OpId first[2], second[2], next[2];
  for (Rank r = 0; r < 2; ++r) {
    first[r] = b.compute({r, compute_s, Category::forward, "lead"}, 1.5e12, 0);  // [0, 1.5]
    second[r] = b.compute({r, compute_s, Category::forward, "mlp"}, 1, 0, 0, l[1]);
    next[r] = b.compute({r, compute_s, Category::forward, "tail"}, 1e12, 0);  // 1 s, no list
    const OpId side = b.compute({r, other, Category::forward, "side"}, 1e12, 0);
    const OpId deps[] = {side};
    b.collective({r, comm, Category::dp_comm, "ar", kNone, deps}, CollectiveType::all_reduce, g,
                 2'000'000'000);
  }
  const auto tl = run(std::move(b).finish(), 2);
  for (Rank r = 0; r < 2; ++r) {
    EXPECT_DOUBLE_EQ(sec(tl.end[first[r]]), 1.5);  // no list: unchanged although held
    EXPECT_DOUBLE_EQ(sec(tl.start[second[r]]), 1.5);
    EXPECT_DOUBLE_EQ(sec(tl.end[second[r]]), 4.25);
    EXPECT_DOUBLE_EQ(sec(tl.start[next[r]]), 4.25);
    EXPECT_DOUBLE_EQ(sec(tl.end[next[r]]), 5.25);
  }
}

// A model that does not cost SM sharing (the default) keeps every op at its full-GPU pace: the
// first test's 4 s op ends at 4 s.
TEST_F(SmSharingTest, AModelWithoutSharingKeepsThePace) {
  ScheduleBuilder b(2);
  const auto compute_s = b.stream("compute");
  const auto comm = b.stream("comm");
  const auto l = lists(b, 4);
  const GroupId g = b.add_group({0, 1}, "dp");
  OpId work[2];
  for (Rank r = 0; r < 2; ++r) {
    work[r] = b.compute({r, compute_s, Category::backward, "bwd"}, 1, 0, 0, l[3]);
    b.collective({r, comm, Category::dp_comm, "ar"}, CollectiveType::all_reduce, g, 2'000'000'000);
  }
  const Schedule s = std::move(b).finish();
  class Plain : public HalfPaceWhileHeld {
    bool models_sm_sharing() const override { return false; }
  } plain;
  topology = gpus_on_a_switch(2);
  const auto tl = simulate(s, topology, network, plain);
  EXPECT_DOUBLE_EQ(sec(tl.end[work[0]]), 4.0);
  EXPECT_TRUE(plain.held_counts.empty());
}

// Without recorded starts a GPU op's launch is still its start, for an op whose end SM sharing
// moved too: the first test's figures, and the second test's op started at 1.5 s.
TEST_F(SmSharingTest, WithoutRecordedStartsAMovedOpLaunchesWhenItStarted) {
  ScheduleBuilder b(2);
  const auto compute_s = b.stream("compute");
  const auto other = b.stream("other");
  const auto comm = b.stream("comm");
  const auto l = lists(b, 4);
  const GroupId g = b.add_group({0, 1}, "dp");
  OpId work[2], late[2];
  for (Rank r = 0; r < 2; ++r) {
    work[r] = b.compute({r, compute_s, Category::backward, "bwd"}, 1, 0, 0, l[3]);   // 4 s
    const OpId side = b.compute({r, other, Category::backward, "side"}, 1.5e12, 0);  // 1.5 s
    const OpId after_side[] = {side};
    late[r] = b.compute({r, other, Category::backward, "late", kNone, after_side}, 1, 0, 0, l[1]);
    const OpId deps[] = {b.compute({r, comm, Category::backward, "lead"}, 1e12, 0)};
    b.collective({r, comm, Category::dp_comm, "ar", kNone, deps}, CollectiveType::all_reduce, g,
                 2'000'000'000);  // [1, 3] s
  }
  SimulationOptions options;
  options.record_starts = false;
  const auto tl = run(std::move(b).finish(), 2, options);
  EXPECT_TRUE(tl.start.empty());
  for (Rank r = 0; r < 2; ++r) {
    EXPECT_DOUBLE_EQ(sec(tl.launch[work[r]]), 0.0);
    EXPECT_DOUBLE_EQ(sec(tl.end[work[r]]), 5.0);  // 1 s alone, 2 s at half pace, 2 s alone
    EXPECT_DOUBLE_EQ(sec(tl.launch[late[r]]), 1.5);
    EXPECT_DOUBLE_EQ(sec(tl.end[late[r]]), 4.25);  // 1.5 s at half pace, 1.25 s alone
  }
}

// Copies to the host run on the copy engines, not on SMs: a 2 GB copy to host memory over
// [0, 0.08] s (25 GB/s PCIe) beside a 1 s op leaves the op at 1 s.
TEST(SmSharing, CopiesToTheHostHoldNoSm) {
  ClusterTopologySpec spec;
  spec.nodes = 1;
  spec.node.fabric = IntraNodeFabric::pcie;
  spec.node.gpus = 2;
  spec.node.gpus_per_pcie_switch = 2;
  spec.node.cpus = 1;
  spec.node.nics = 1;
  spec.node.pcie_bandwidth = Bandwidth::bytes_per_second(25e9);
  spec.node.nic_bandwidth = Bandwidth::bytes_per_second(25e9);
  const Topology t = build_cluster_topology(spec);
  ScheduleBuilder b(1);
  const auto compute_s = b.stream("compute");
  const auto offload = b.stream("offload");
  const auto l = lists(b, 1);
  const OpId op = b.compute({0, compute_s, Category::forward, "fwd"}, 1, 0, 0, l[0]);
  b.copy({0, offload, Category::optimizer, "to host"}, 2'000'000'000, CopyDirection::to_host);
  const Schedule s = std::move(b).finish();
  HalfPaceWhileHeld compute;
  auto net = make_network_model("flow", t);
  const auto tl = simulate(s, t, *net, compute);
  EXPECT_DOUBLE_EQ(sec(tl.end[op]), 1.0);
  EXPECT_TRUE(compute.held_counts.empty());
}

// A send holds an SM for each channel it takes at its size (TransferPlan::channels_at): on a node
// of 8 GPUs at 1 TB/s NVLink (32 p2p channels), 32 MiB from rank 0 to rank 1 beside a 1 s op on
// rank 0 takes 16 channels on the pair's communicator (nChannelsMin 32 / 2) and 4 when the two
// post their sends on a communicator of all 8 (32 / 8): the op runs while 16, then 4, SMs are held.
TEST(SmSharing, ASendHoldsAnSmForEachChannelItTakes) {
  ClusterTopologySpec spec;
  spec.nodes = 1;
  spec.node.gpus = 8;
  spec.node.nics = 8;
  spec.node.nvlink_bandwidth = Bandwidth::gigabytes_per_second(1000);
  spec.node.pcie_bandwidth = Bandwidth::gigabytes_per_second(400);
  const Topology t = build_cluster_topology(spec);
  for (const auto& [on_group, sms] : {std::pair{false, 16u}, std::pair{true, 4u}}) {
    ScheduleBuilder b(8);
    const auto compute_s = b.stream("compute");
    const auto comm = b.stream("comm");
    const auto l = lists(b, 1);
    if (on_group) b.post_sends_on(b.add_group({0, 1, 2, 3, 4, 5, 6, 7}, "pp[0]"));
    b.compute({0, compute_s, Category::forward, "fwd"}, 1, 0, 0, l[0]);
    b.send({0, comm, Category::pp_comm, "send"}, 1, 33'554'432, 0);
    b.recv({1, comm, Category::pp_comm, "recv"}, 0, 33'554'432, 0);
    const Schedule s = std::move(b).finish();
    HalfPaceWhileHeld compute;
    auto net = make_network_model("flow", t);
    const auto tl = simulate(s, t, *net, compute);
    ASSERT_FALSE(compute.held_counts.empty()) << on_group;
    EXPECT_EQ(compute.held_counts.front(), sms) << on_group;
    EXPECT_EQ(tl.channels[1], sms) << on_group;  // the send's record, as the trace shows it
  }
}

}  // namespace
}  // namespace clustersim::engine
