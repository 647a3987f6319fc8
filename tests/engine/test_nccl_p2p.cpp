// Issue 17: all-to-all across nodes as NCCL runs it (send/recv to every peer, PXN relays),
// against hand-derived flows and times.
#include <gtest/gtest.h>

#include <vector>

#include "engine/network/collectives.hpp"
#include "engine/topology_builders.hpp"
#include "tests/engine/run_flow.hpp"

namespace clustersim::engine {
namespace {

constexpr double kNicBps = 25e9;  // 200 Gb/s

// `nodes` NVSwitch nodes of `gpus` GPUs, one NIC per GPU, NVLink 1 TB/s (far above the NICs).
// Latencies as the builder's defaults: 0.5 µs a NVLink or PCIe link, 1 µs a fabric link.
ClusterTopologySpec nodes_of(int nodes, int gpus, FabricKind fabric) {
  ClusterTopologySpec spec;
  spec.nodes = nodes;
  spec.node.gpus = gpus;
  spec.node.nics = gpus;
  spec.node.nvlink_bandwidth = Bandwidth::gigabytes_per_second(1000);
  spec.node.pcie_bandwidth = Bandwidth::gigabytes_per_second(400);
  spec.node.nic_bandwidth = Bandwidth::bytes_per_second(kNicBps);
  spec.fabric.kind = fabric;
  return spec;
}

std::vector<EndpointId> every_gpu(const Topology& t) {
  std::vector<EndpointId> m;
  for (EndpointId e = 0; e < t.num_gpus(); ++e)
    m.push_back(e);
  return m;
}

TEST(NcclAllToAll, RemoteBytesStayOnTheirRailThroughPxn) {
  // 2 nodes × 4 GPUs, n = 8, S/8 to every peer. A GPU's bytes for the GPU at local index p of
  // the other node go over NVLink to its own node's GPU p, which sends them over NIC p. So:
  //  - a pair inside a node (i != j) carries S/8 of its own plus S/8 relayed for the other
  //    node's GPU j: 2/8 = 0.25 (4 × 3 pairs × 2 nodes = 24 flows);
  //  - across nodes only GPU p -> GPU p of the other node, carrying the S/8 of each of the 4
  //    GPUs of its node: 4/8 = 0.5 (4 × 2 = 8 flows), i.e. the off-node bytes of one GPU,
  //    S·(n − g)/n.
  const Topology t = build_cluster_topology(nodes_of(2, 4, FabricKind::single_switch));
  const auto m = every_gpu(t);
  const TransferPlan p = plan_collective(CollectiveType::all_to_all, Algorithm::direct, m, 0, t);
  ASSERT_EQ(p.phases.size(), 1u);
  int intra = 0;
  int inter = 0;
  for (const FlowSpec& f : p.phases[0].flows) {
    if (t.node_of(f.src) == t.node_of(f.dst)) {
      ++intra;
      EXPECT_DOUBLE_EQ(f.bytes_per_payload_byte, 0.25);
    } else {
      ++inter;
      EXPECT_EQ(f.src % 4, f.dst % 4) << f.src << " -> " << f.dst << " leaves its rail";
      EXPECT_DOUBLE_EQ(f.bytes_per_payload_byte, 0.5);
    }
  }
  EXPECT_EQ(intra, 24);
  EXPECT_EQ(inter, 8);
}

TEST(NcclAllToAll, TwoNodesOfEightTakeTheNicBoundPlusTheirSteps) {
  // 2 nodes × 8 GPUs × 8 NICs of B = 25 GB/s, all-to-all of S = 1 GB per GPU. Off-node bytes per
  // GPU S·8/16 = S/2, all on its rail's NIC (each NIC sends S/2 and receives S/2); NVLink per
  // GPU carries 7/16·S to its node's peers plus 7/16·S of PXN relays, 0.875 GB at 1 TB/s, far
  // below the NIC's 20 ms. Latency (n − 1)·α, α the slowest route: GPU -> NIC (0.5 µs) ->
  // switch (1 µs) -> NIC (1 µs) -> GPU (0.5 µs) = 3 µs. T = 15 · 3 µs + (S/2)/B = 20.045 ms.
  const Topology t = build_cluster_topology(nodes_of(2, 8, FabricKind::single_switch));
  const TransferPlan p =
      plan_collective(CollectiveType::all_to_all, Algorithm::direct, every_gpu(t), 0, t);
  const double s = 1e9;
  EXPECT_EQ(p.phases[0].latency, Time::from_ps(45'000'000));
  EXPECT_NEAR(run_flow_once(t, p, s), 45e-6 + 0.5 * s / kNicBps, 1e-9);
}

TEST(NcclAllToAll, ARailOptimizedFabricCarriesItWithoutTheSpines) {
  // The same 2 × 8 on a rail-optimized fabric whose rails reach the spine through a 4:1
  // oversubscribed trunk (2 NICs × 25 GB/s / 4 = 12.5 GB/s a rail). Sent from each GPU's own NIC,
  // the 7/8 of a NIC's S/2 bound for other rails would cross that trunk (0.4375 GB at 12.5 GB/s
  // = 35 ms); with PXN nothing leaves its rail, so the time is the NIC bound of the previous
  // test, and the route the same three fabric-side hops: 15 · 3 µs + (S/2)/B.
  ClusterTopologySpec spec = nodes_of(2, 8, FabricKind::rail_optimized);
  spec.fabric.oversubscription = 4.0;
  const Topology t = build_cluster_topology(spec);
  const TransferPlan p =
      plan_collective(CollectiveType::all_to_all, Algorithm::direct, every_gpu(t), 0, t);
  const double s = 1e9;
  EXPECT_NEAR(run_flow_once(t, p, s), 45e-6 + 0.5 * s / kNicBps, 1e-9);
}

TEST(NcclAllToAll, GpusSharingANicSendThemselves) {
  // 2 nodes × 8 GPUs with 4 NICs, one per PCIe switch of 2 GPUs: GPUs 2i and 2i+1 share NIC i.
  // NCCL relays through another GPU only for a NIC that GPU reaches better, never for one both
  // reach alike, so GPU 2i sends its bytes for the other node's GPU 2i+1 itself. Each NIC carries
  // its two GPUs' off-node bytes, 2 · S/2 = S: T = (n − 1)·α + S/B.
  ClusterTopologySpec spec = nodes_of(2, 8, FabricKind::single_switch);
  spec.node.nics = 4;
  const Topology t = build_cluster_topology(spec);
  const auto m = every_gpu(t);
  const TransferPlan p = plan_collective(CollectiveType::all_to_all, Algorithm::direct, m, 0, t);
  for (const FlowSpec& f : p.phases[0].flows) {
    if (t.node_of(f.src) == t.node_of(f.dst) && f.src / 2 == f.dst / 2) {
      EXPECT_DOUBLE_EQ(f.bytes_per_payload_byte, 1.0 / 16.0) << f.src << " -> " << f.dst;
    }
  }
  const double s = 1e9;
  const double latency = p.phases[0].latency.seconds();
  EXPECT_NEAR(run_flow_once(t, p, s) - latency, s / kNicBps, 1e-9);
}

TEST(NcclAllToAll, NoRelayWithoutAMemberOnThePeersRail) {
  // Group {0, 1, 10, 11} on 2 × 8 GPUs: node 1's members sit at local indices 2 and 3, where node
  // 0 has no member, so no GPU of the group is attached to the NIC they receive on and each sender
  // uses its own (NCCL's topology holds only the communicator's GPUs). Flows: 0 <-> 1 and
  // 10 <-> 11 of S/4, and every cross pair i -> j of S/4 straight from i.
  const Topology t = build_cluster_topology(nodes_of(2, 8, FabricKind::single_switch));
  const std::vector<EndpointId> m{0, 1, 10, 11};
  const TransferPlan p = plan_collective(CollectiveType::all_to_all, Algorithm::direct, m, 0, t);
  ASSERT_EQ(p.phases[0].flows.size(), 12u);
  for (const FlowSpec& f : p.phases[0].flows)
    EXPECT_DOUBLE_EQ(f.bytes_per_payload_byte, 0.25) << f.src << " -> " << f.dst;
}

TEST(NcclAllToAll, OneNodeKeepsEveryPairDirect) {
  // Inside one node there is no network and no relay: n(n − 1) pairs of S/n.
  const Topology t = build_cluster_topology(nodes_of(1, 8, FabricKind::single_switch));
  const TransferPlan p =
      plan_collective(CollectiveType::all_to_all, Algorithm::direct, every_gpu(t), 0, t);
  ASSERT_EQ(p.phases[0].flows.size(), 56u);
  for (const FlowSpec& f : p.phases[0].flows)
    EXPECT_DOUBLE_EQ(f.bytes_per_payload_byte, 1.0 / 8.0);
}

}  // namespace
}  // namespace clustersim::engine
