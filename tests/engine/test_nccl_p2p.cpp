// Issue 17: all-to-all as NCCL runs it (send/recv to every peer in parts on its p2p channels,
// PXN relays across nodes), against hand-derived flows and times.
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

// NCCL's parts of one send (docs/network.md "All-to-all: send/receive parts") for 2 × 8 GPUs on
// 200 Gb/s NICs: the communicator's 16 ring channels (2 a NIC) are its p2p channels; a peer on
// the other node may take ⌈25 / 14⌉ = 2 (fewer than a local NVLink peer's), and 2 · ⌈16 / 8⌉ ≤ 16
// keeps 2; nChannelsMin halves from 2 until 16 ranks fit 16 channels: 1. A send of S/16 = 62.5 MB
// starts on 1 channel and, its part above the 128 KiB chunk, doubles to 2, the peer's most.
// The first 128 KiB chunk of each of the 16 · 2 parts per unit of payload crosses one stage at its
// share of the busiest link: fill = 16 · 2 · 131072 B · (S/2 per NIC) / S / B.
double two_node_fill(double nic_share) {
  return 16.0 * 2.0 * 131072.0 * nic_share / kNicBps;
}

TEST(NcclAllToAll, TwoNodesOfEightTakeTheNicBoundPlusTheirSteps) {
  // 2 nodes × 8 GPUs × 8 NICs of B = 25 GB/s, all-to-all of S = 1 GB per GPU. Off-node bytes per
  // GPU S·8/16 = S/2, all on its rail's NIC (each NIC sends S/2 and receives S/2); NVLink per
  // GPU carries 7/16·S to its node's peers plus 7/16·S of PXN relays, 0.875 GB at 1 TB/s, far
  // below the NIC's 20 ms. Latency (n − 1)·α, α the slowest route: GPU -> NIC (0.5 µs) ->
  // switch (1 µs) -> NIC (1 µs) -> GPU (0.5 µs) = 3 µs. T = 15 · 3 µs + fill + (S/2)/B, the fill
  // 32 · 131072 B · 0.5 / B = 83.9 µs: 20.129 ms.
  const Topology t = build_cluster_topology(nodes_of(2, 8, FabricKind::single_switch));
  const TransferPlan p =
      plan_collective(CollectiveType::all_to_all, Algorithm::direct, every_gpu(t), 0, t);
  const double s = 1e9;
  EXPECT_EQ(p.phases[0].latency, Time::from_ps(45'000'000));
  EXPECT_NEAR(run_flow_once(t, p, s), 45e-6 + two_node_fill(0.5) + 0.5 * s / kNicBps, 1e-9);
}

TEST(NcclAllToAll, ARailOptimizedFabricCarriesItWithoutTheSpines) {
  // The same 2 × 8 on a rail-optimized fabric whose rails reach the spine through a 4:1
  // oversubscribed trunk (2 NICs × 25 GB/s / 4 = 12.5 GB/s a rail). Sent from each GPU's own NIC,
  // the 7/8 of a NIC's S/2 bound for other rails would cross that trunk (0.4375 GB at 12.5 GB/s
  // = 35 ms); with PXN nothing leaves its rail, so the time is the NIC bound of the previous
  // test, and the route the same three fabric-side hops: 15 · 3 µs + fill + (S/2)/B.
  ClusterTopologySpec spec = nodes_of(2, 8, FabricKind::rail_optimized);
  spec.fabric.oversubscription = 4.0;
  const Topology t = build_cluster_topology(spec);
  const TransferPlan p =
      plan_collective(CollectiveType::all_to_all, Algorithm::direct, every_gpu(t), 0, t);
  const double s = 1e9;
  EXPECT_NEAR(run_flow_once(t, p, s), 45e-6 + two_node_fill(0.5) + 0.5 * s / kNicBps, 1e-9);
}

TEST(NcclAllToAll, GpusSharingANicSendThemselves) {
  // 2 nodes × 8 GPUs with 4 NICs, one per PCIe switch of 2 GPUs: GPUs 2i and 2i+1 share NIC i.
  // NCCL relays through another GPU only for a NIC that GPU reaches better, never for one both
  // reach alike, so GPU 2i sends its bytes for the other node's GPU 2i+1 itself. Each NIC carries
  // its two GPUs' off-node bytes, 2 · S/2 = S: T = (n − 1)·α + fill + S/B. The communicator's
  // ring channels are 2 a NIC, 8, still enough to keep 2 a peer (2 · ⌈16 / 8⌉ ≤ 8), so the parts
  // are those of the test above, over a NIC loaded twice as much.
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
  EXPECT_NEAR(run_flow_once(t, p, s) - latency, two_node_fill(1.0) + s / kNicBps, 1e-9);
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

TEST(NcclAllToAll, OneNodeFillsAChunkOfEveryPart) {
  // 8 GPUs on one NVSwitch at 1 TB/s (docs/network.md "All-to-all: send/receive parts"). The
  // communicator's ring channels: 1000 / 20 = 50, capped at 32, so 32 p2p channels; a local peer
  // may take 2 × 50 NVLinks' worth, a power of two, at most the 32 channels: 32; nChannelsMin
  // halves from 32 until 8 ranks × it fit 32 channels: 4. Chunk 512 KiB (NCCL_P2P_NVL_CHUNKSIZE); a
  // part above 32 chunks (16 MiB) doubles the send's channels, up to 32. Each GPU's link carries
  // 7/8 of S: fill = 8 · channels · 524288 B · (7/8) / 1 TB/s.
  //   S = 32 MiB: sends of 4 MiB on 4 channels (1 MiB parts): 14.68 µs;
  //   S = 1 GiB: 128 MiB on 4 -> 8 channels (16 MiB parts): 29.36 µs;
  //   S = 16 GiB: 2 GiB on 4 -> 8 -> 16 -> 32 channels (64 MiB parts, 32 the most): 117.44 µs;
  //   S = 64 KiB: 8 KiB sends, below one part of 64 KiB: 1 channel, the whole send its chunk:
  //   8 · 8192 B · 7/8 / 1 TB/s = 0.057 µs.
  const Topology t = build_cluster_topology(nodes_of(1, 8, FabricKind::single_switch));
  const TransferPlan p =
      plan_collective(CollectiveType::all_to_all, Algorithm::direct, every_gpu(t), 0, t);
  const Phase& phase = p.phases[0];
  const auto fill = [&](double s) { return (phase.latency_for(s) - phase.latency).seconds(); };
  const double per_channel = 8.0 * 524288.0 * 7.0 / 8.0 / 1e12;
  EXPECT_NEAR(fill(33554432.0), 4 * per_channel, 1e-12);
  EXPECT_NEAR(fill(1073741824.0), 8 * per_channel, 1e-12);
  EXPECT_NEAR(fill(17179869184.0), 32 * per_channel, 1e-12);
  EXPECT_NEAR(fill(65536.0), 8.0 * 8192.0 * 7.0 / 8.0 / 1e12, 1e-15);
  // The whole run at 32 MiB: 7 route latencies of 1 µs (GPU -> NVSwitch -> GPU), the fill, and
  // 7/8 of S through each GPU's link.
  const double s = 33554432.0;
  EXPECT_NEAR(run_flow_once(t, p, s), 7e-6 + 4 * per_channel + s * 7.0 / 8.0 / 1e12, 1e-9);
}

}  // namespace
}  // namespace clustersim::engine
