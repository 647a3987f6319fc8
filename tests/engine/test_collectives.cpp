// Collective plans: byte and latency terms derived by hand from each algorithm's definition.
#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <utility>
#include <vector>

#include "engine/network/collectives.hpp"

namespace clustersim::engine {
namespace {

constexpr double kB = 100e9;  // bytes/s per direction

// n GPUs on one switch; every GPU-GPU route is 2 links, so α = 2 × link latency.
Topology single_switch(int n, Time link_latency, int gpus_per_node = 1) {
  Topology t;
  const VertexId sw = t.add_vertex(VertexKind::leaf_switch, "sw", -1);
  for (int i = 0; i < n; ++i) {
    const EndpointId g = t.add_gpu("gpu" + std::to_string(i), i / gpus_per_node);
    t.add_link(t.gpu_vertex(g), sw, Bandwidth::bytes_per_second(kB), link_latency,
               LinkKind::nvlink);
  }
  return t;
}

std::vector<EndpointId> iota(std::uint32_t n) {
  std::vector<EndpointId> m(n);
  for (std::uint32_t i = 0; i < n; ++i)
    m[i] = i;
  return m;
}

// Bytes per payload byte for each ordered (src, dst) pair, summed over the phase's flows.
std::map<std::pair<EndpointId, EndpointId>, double> pair_bytes(const Phase& phase) {
  std::map<std::pair<EndpointId, EndpointId>, double> out;
  for (const FlowSpec& f : phase.flows)
    out[{f.src, f.dst}] += f.bytes_per_payload_byte;
  return out;
}

TEST(Collectives, BusBandwidthFactorsFollowNcclTests) {
  // nccl-tests doc/PERFORMANCE.md: all-reduce 2(n-1)/n, all-gather/reduce-scatter/all-to-all
  // (n-1)/n, broadcast, reduce and send/recv 1; scatter.cu and gather.cu use (n-1)/n. n = 8:
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveType::all_reduce, 8), 14.0 / 8.0);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveType::all_gather, 8), 7.0 / 8.0);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveType::reduce_scatter, 8), 7.0 / 8.0);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveType::all_to_all, 8), 7.0 / 8.0);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveType::scatter, 8), 7.0 / 8.0);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveType::gather, 8), 7.0 / 8.0);
  for (auto t : {CollectiveType::broadcast, CollectiveType::reduce, CollectiveType::send_recv}) {
    EXPECT_DOUBLE_EQ(bus_bandwidth_factor(t, 8), 1.0);
  }
  EXPECT_THROW(bus_bandwidth_factor(CollectiveType::all_reduce, 0), std::invalid_argument);
}

TEST(Collectives, RingAllReduceIsOnePhaseOfNeighbourFlows) {
  const Time l = Time::from_ps(1'000'000);  // 1 us per link -> α = 2 us
  const Topology t = single_switch(4, l);
  const auto m = iota(4);
  const TransferPlan p = plan_collective(CollectiveType::all_reduce, Algorithm::ring, m, 0, t);
  ASSERT_EQ(p.phases.size(), 1u);
  // NCCL's latency (one GPU per node, Simple): base 8.4 us + 2(N-1) = 6 network steps of 14 us
  // (the tree row's NET latency when ppn = 1; above the 2 us route); each edge i -> i+1 carries
  // 2(n-1)/n = 1.5 bytes per byte.
  EXPECT_EQ(p.phases[0].latency, Time::from_seconds(92.4e-6));
  EXPECT_EQ(p.protocol, Protocol::simple);
  EXPECT_EQ(p.channels, 1);
  const auto b = pair_bytes(p.phases[0]);
  ASSERT_EQ(b.size(), 4u);
  for (EndpointId i = 0; i < 4; ++i)
    EXPECT_DOUBLE_EQ(b.at({i, (i + 1) % 4}), 1.5);
}

TEST(Collectives, RingRootedChainsStartAtTheRoot) {
  const Topology t = single_switch(4, Time::from_ps(1'000'000));
  const auto m = iota(4);
  // Broadcast from index 2: chain 2 -> 3 -> 0 -> 1, every edge S, latency (n-1)·α = 6 us.
  const TransferPlan bc = plan_collective(CollectiveType::broadcast, Algorithm::ring, m, 2, t);
  ASSERT_EQ(bc.phases.size(), 1u);
  EXPECT_EQ(bc.phases[0].latency, Time::from_ps(6'000'000));
  const std::map<std::pair<EndpointId, EndpointId>, double> want_bc{
      {{2, 3}, 1.0}, {{3, 0}, 1.0}, {{0, 1}, 1.0}};
  EXPECT_EQ(pair_bytes(bc.phases[0]), want_bc);
  // Reduce to index 2: chain 3 -> 0 -> 1 -> 2.
  const TransferPlan rd = plan_collective(CollectiveType::reduce, Algorithm::ring, m, 2, t);
  const std::map<std::pair<EndpointId, EndpointId>, double> want_rd{
      {{3, 0}, 1.0}, {{0, 1}, 1.0}, {{1, 2}, 1.0}};
  EXPECT_EQ(pair_bytes(rd.phases[0]), want_rd);
  // Scatter from index 1: S/n = 0.25 to each other member in one step (α = 2 us).
  const TransferPlan sc = plan_collective(CollectiveType::scatter, Algorithm::ring, m, 1, t);
  EXPECT_EQ(sc.phases[0].latency, Time::from_ps(2'000'000));
  const std::map<std::pair<EndpointId, EndpointId>, double> want_sc{
      {{1, 0}, 0.25}, {{1, 2}, 0.25}, {{1, 3}, 0.25}};
  EXPECT_EQ(pair_bytes(sc.phases[0]), want_sc);
}

TEST(Collectives, SingleMemberGroupsCostNothing) {
  const Topology t = single_switch(2, Time::from_ps(1000));
  const std::vector<EndpointId> one{1};
  for (auto a : {Algorithm::ring, Algorithm::tree, Algorithm::direct}) {
    EXPECT_TRUE(plan_collective(CollectiveType::all_reduce, a, one, 0, t).phases.empty());
  }
}

TEST(Collectives, DoubleBinaryTreeOnFourRanksMatchesNccl) {
  // ncclGetBtree(4): parent(1) = 2, parent(3) = 2, parent(2) = 0 -> edges 1-2, 3-2, 2-0.
  // Mirrored tree (n even): parent'(r) = 3 - parent(3 - r): 0->1, 1->3, 2->1 -> edges 0-1, 1-3,
  // 2-1. Each tree edge carries S/2 each way; 1-2 is in both trees, so it carries S.
  const Topology t = single_switch(4, Time::from_ps(1'000'000));
  const auto m = iota(4);
  const TransferPlan p = plan_collective(CollectiveType::all_reduce, Algorithm::tree, m, 0, t);
  ASSERT_EQ(p.phases.size(), 1u);
  // NCCL's tree latency: base 8.4 us + 2·(log2(4) = 2 network hops of 14 us).
  EXPECT_EQ(p.phases[0].latency, Time::from_seconds(64.4e-6));
  const std::map<std::pair<EndpointId, EndpointId>, double> want{
      {{1, 2}, 1.0}, {{2, 1}, 1.0}, {{3, 2}, 0.5}, {{2, 3}, 0.5}, {{2, 0}, 0.5},
      {{0, 2}, 0.5}, {{0, 1}, 0.5}, {{1, 0}, 0.5}, {{1, 3}, 0.5}, {{3, 1}, 0.5}};
  EXPECT_EQ(pair_bytes(p.phases[0]), want);
}

TEST(Collectives, DoubleBinaryTreeOnThreeRanksShiftsTheSecondTree) {
  // ncclGetBtree(3): parent(1) = (1^1)|2 = 2, parent(2) = (2^2)|4 = 4 >= 3 -> 2^2 = 0;
  // edges 1-2, 2-0. Shifted tree (n odd): parent'(r) = parent(r-1 mod 3) + 1 mod 3, rooted at 1:
  // parent'(0) = parent(2) + 1 = 1, parent'(2) = parent(1) + 1 = 0; edges 0-1, 2-0.
  // Edge 2-0 is in both trees (S each way), the others carry S/2 each way.
  const Topology t = single_switch(3, Time::from_ps(1'000'000));
  const auto m = iota(3);
  const TransferPlan p = plan_collective(CollectiveType::all_reduce, Algorithm::tree, m, 0, t);
  const std::map<std::pair<EndpointId, EndpointId>, double> want{
      {{1, 2}, 0.5}, {{2, 1}, 0.5}, {{2, 0}, 1.0}, {{0, 2}, 1.0}, {{0, 1}, 0.5}, {{1, 0}, 0.5}};
  EXPECT_EQ(pair_bytes(p.phases[0]), want);
}

// Two nodes of two GPUs: each node's GPUs hang off an NVSwitch (0.5 us links), the NVSwitches
// hang off one leaf (5 us links). α_intra = 1 us, α_inter = 0.5 + 5 + 5 + 0.5 = 11 us.
Topology two_nodes() {
  Topology t;
  const VertexId leaf = t.add_vertex(VertexKind::leaf_switch, "leaf", -1);
  for (int node = 0; node < 2; ++node) {
    const VertexId nvs = t.add_vertex(VertexKind::nvswitch, "nvs", node);
    t.add_link(nvs, leaf, Bandwidth::bytes_per_second(kB / 4), Time::from_ps(5'000'000),
               LinkKind::ib);
    for (int g = 0; g < 2; ++g) {
      const EndpointId e = t.add_gpu("gpu", node);
      t.add_link(t.gpu_vertex(e), nvs, Bandwidth::bytes_per_second(kB), Time::from_ps(500'000),
                 LinkKind::nvlink);
    }
  }
  return t;
}

TEST(Collectives, HierarchicalAllReduceHasThreePhases) {
  const Topology t = two_nodes();
  const auto m = iota(4);  // nodes {0,1}, {2,3}
  const TransferPlan p =
      plan_collective(CollectiveType::all_reduce, Algorithm::hierarchical, m, 0, t);
  ASSERT_EQ(p.phases.size(), 3u);
  // Phase 1, intra reduce-scatter, g = 2: each intra edge (g-1)/g = 0.5, (g-1) = 1 step.
  const std::map<std::pair<EndpointId, EndpointId>, double> intra{
      {{0, 1}, 0.5}, {{1, 0}, 0.5}, {{2, 3}, 0.5}, {{3, 2}, 0.5}};
  EXPECT_EQ(pair_bytes(p.phases[0]), intra);
  EXPECT_EQ(p.phases[0].latency, Time::from_ps(1'000'000));
  // Phase 2, inter all-reduce of the S/g shard among {0,2} and {1,3}, N = 2:
  // 2(N-1)/N · 1/g = 0.5 per edge, 2(N-1) = 2 steps of 11 us.
  const std::map<std::pair<EndpointId, EndpointId>, double> inter{
      {{0, 2}, 0.5}, {{2, 0}, 0.5}, {{1, 3}, 0.5}, {{3, 1}, 0.5}};
  EXPECT_EQ(pair_bytes(p.phases[1]), inter);
  EXPECT_EQ(p.phases[1].latency, Time::from_ps(22'000'000));
  // Phase 3, intra all-gather: the same bytes as phase 1.
  EXPECT_EQ(pair_bytes(p.phases[2]), intra);
}

TEST(Collectives, HierarchicalAllGatherGoesInterThenIntra) {
  const Topology t = two_nodes();
  const auto m = iota(4);
  const TransferPlan p =
      plan_collective(CollectiveType::all_gather, Algorithm::hierarchical, m, 0, t);
  ASSERT_EQ(p.phases.size(), 2u);
  // Inter all-gather among columns builds S/g = S/2 per rank: (N-1)/N · 1/g = 0.25 per edge.
  EXPECT_DOUBLE_EQ(pair_bytes(p.phases[0]).at({0, 2}), 0.25);
  // Intra all-gather of the whole buffer: (g-1)/g = 0.5 per edge.
  EXPECT_DOUBLE_EQ(pair_bytes(p.phases[1]).at({0, 1}), 0.5);
}

TEST(Collectives, HierarchicalRejectsUnevenNodes) {
  const Topology t = two_nodes();
  const std::vector<EndpointId> m{0, 1, 2};  // two on node 0, one on node 1
  EXPECT_THROW(plan_collective(CollectiveType::all_reduce, Algorithm::hierarchical, m, 0, t),
               std::invalid_argument);
}

TEST(Collectives, DirectPlansUseEveryPair) {
  const Topology t = single_switch(4, Time::from_ps(1'000'000));
  const auto m = iota(4);
  const TransferPlan a2a = plan_collective(CollectiveType::all_to_all, Algorithm::direct, m, 0, t);
  ASSERT_EQ(a2a.phases.size(), 1u);
  // n(n-1) = 12 pairs of S/n = 0.25, latency (n-1)·α = 3 × 2 us.
  EXPECT_EQ(a2a.phases[0].flows.size(), 12u);
  for (const FlowSpec& f : a2a.phases[0].flows)
    EXPECT_DOUBLE_EQ(f.bytes_per_payload_byte, 0.25);
  EXPECT_EQ(a2a.phases[0].latency, Time::from_ps(6'000'000));
  // Direct all-reduce = direct reduce-scatter + direct all-gather.
  const TransferPlan ar = plan_collective(CollectiveType::all_reduce, Algorithm::direct, m, 0, t);
  ASSERT_EQ(ar.phases.size(), 2u);
  EXPECT_EQ(ar.phases[1].flows.size(), 12u);
}

TEST(Collectives, RingAllToAllRelaysAlongTheRing) {
  // The chunk for the rank d ahead crosses d edges: each edge carries (1/n)(1+...+(n-1)) =
  // (n-1)/2 = 1.5 bytes per byte for n = 4.
  const Topology t = single_switch(4, Time::from_ps(1000));
  const TransferPlan p =
      plan_collective(CollectiveType::all_to_all, Algorithm::ring, iota(4), 0, t);
  EXPECT_DOUBLE_EQ(pair_bytes(p.phases[0]).at({3, 0}), 1.5);
}

TEST(Collectives, RejectsBadRequests) {
  const Topology t = single_switch(4, Time::from_ps(1000));
  const auto m = iota(4);
  EXPECT_THROW(plan_collective(CollectiveType::all_reduce, Algorithm::automatic, m, 0, t),
               std::invalid_argument);
  EXPECT_THROW(plan_collective(CollectiveType::broadcast, Algorithm::tree, m, 0, t),
               std::invalid_argument);
  EXPECT_THROW(plan_collective(CollectiveType::broadcast, Algorithm::ring, m, 4, t),
               std::invalid_argument);
  EXPECT_THROW(plan_collective(CollectiveType::send_recv, Algorithm::ring, m, 0, t),
               std::invalid_argument);
  const std::vector<EndpointId> dup{0, 1, 1};
  EXPECT_THROW(plan_collective(CollectiveType::all_gather, Algorithm::ring, dup, 0, t),
               std::invalid_argument);
  const std::vector<EndpointId> missing{0, 9};
  EXPECT_THROW(plan_collective(CollectiveType::all_gather, Algorithm::ring, missing, 0, t),
               std::invalid_argument);
}

TEST(Collectives, DefaultChoiceFollowsNccl) {
  const Topology t = single_switch(8, Time::from_ps(1000), /*gpus_per_node=*/2);  // 4 nodes
  const auto all = iota(8);
  const std::vector<EndpointId> one_node{0, 1};
  const std::vector<EndpointId> two_nodes{0, 1, 2, 3};
  EXPECT_EQ(choose_algorithm(CollectiveType::all_to_all, 1e9, all, t), Algorithm::direct);
  // The tuner: LL for tiny messages (lowest latency), the tree across nodes while latency
  // dominates, ring + Simple for large messages (the tree's 0.92 and per-channel limits).
  const CollectiveChoice tiny = choose_collective(CollectiveType::all_reduce, 1e3, one_node, t);
  EXPECT_EQ(tiny.algorithm, Algorithm::ring);
  EXPECT_EQ(tiny.protocol, Protocol::ll);
  EXPECT_EQ(choose_algorithm(CollectiveType::all_reduce, 1e3, all, t), Algorithm::tree);
  const CollectiveChoice big = choose_collective(CollectiveType::all_reduce, 1e9, two_nodes, t);
  EXPECT_EQ(big.algorithm, Algorithm::ring);
  EXPECT_EQ(big.protocol, Protocol::simple);
  EXPECT_EQ(choose_algorithm(CollectiveType::all_gather, 1e3, all, t), Algorithm::ring);
  // A forced algorithm keeps its protocol choice.
  EXPECT_EQ(choose_collective(CollectiveType::all_reduce, 1e9, all, t, Algorithm::tree).algorithm,
            Algorithm::tree);
}

}  // namespace
}  // namespace clustersim::engine
