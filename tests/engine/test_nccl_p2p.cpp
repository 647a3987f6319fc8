// Issue 17: all-to-all and sends as NCCL runs them (send/recv in parts on its p2p channels, each
// channel at most 20.6 GB/s, PXN relays across nodes), against hand-derived flows and times.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
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
  // 7/8 of S, shared by 8 · channels parts, and a part moves at most a channel's 20.6 GB/s
  // (docs/network.md "Sends: a channel's rate"), shared with the other parts on its channel when
  // the 8 sends' parts outnumber the 32 p2p channels: fill = min(chunk, part) / min(20.6 GB/s ×
  // 32 / parts (at most 20.6), 1 TB/s / (8 · channels · 7/8)).
  //   S = 32 MiB: sends of 4 MiB on 4 channels (1 MiB parts), 32 parts, at 20.6 GB/s (the link's
  //   share, 35.7 GB/s, is more): 524288 / 20.6e9 = 25.45 µs;
  //   S = 1 GiB: 128 MiB on 4 -> 8 channels (16 MiB parts), 64 parts, 2 a channel: 10.3 GB/s,
  //   below the link's 17.9: 524288 / 10.3e9 = 50.90 µs;
  //   S = 16 GiB: 2 GiB on 4 -> 8 -> 16 -> 32 channels (64 MiB parts, 32 the most), 256 parts, 8 a
  //   channel: 2.575 GB/s, below the link's 4.46: 203.6 µs;
  //   S = 64 KiB: 8 KiB sends, below one part of 64 KiB: 1 channel, the whole send its chunk, at
  //   20.6 GB/s: 0.398 µs.
  const Topology t = build_cluster_topology(nodes_of(1, 8, FabricKind::single_switch));
  const TransferPlan p =
      plan_collective(CollectiveType::all_to_all, Algorithm::direct, every_gpu(t), 0, t);
  const Phase& phase = p.phases[0];
  const auto fill = [&](double s) { return (phase.latency_for(s) - phase.latency).seconds(); };
  const double channel_rate = 20.6e9;
  EXPECT_NEAR(fill(33554432.0), 524288.0 / channel_rate, 1e-12);
  EXPECT_NEAR(fill(1073741824.0), 524288.0 * 2 / channel_rate, 1e-12);
  EXPECT_NEAR(fill(17179869184.0), 524288.0 * 8 / channel_rate, 1e-12);
  EXPECT_NEAR(fill(65536.0), 8192.0 / channel_rate, 1e-12);  // Time keeps picoseconds
  // The whole run at 32 MiB: 7 route latencies of 1 µs (GPU -> NVSwitch -> GPU), the fill, and
  // each pair's S/8 at its 4 channels' 82.4 GB/s, below its 1/7 of the link (143 GB/s).
  const double s = 33554432.0;
  EXPECT_NEAR(run_flow_once(t, p, s), 7e-6 + 524288.0 / channel_rate + s / 8.0 / (4 * channel_rate),
              1e-9);
  // At 1 GiB the 64 parts share the 32 channels: a rank's sends move at most 32 × 20.6 = 659.2
  // GB/s of payload, below the 1 TB/s link's 1143 (its 7/8 of S leave on it), so T = 7 µs + fill
  // + S / 659.2 GB/s (each part alone at its channel's rate would give 64 × 20.6 and the link).
  const double g = 1073741824.0;
  EXPECT_NEAR(run_flow_once(t, p, g), 7e-6 + 524288.0 * 2 / channel_rate + g / (32 * channel_rate),
              1e-9);
}

// A p2p channel's rate (nccl::kP2pChannelGBps, docs/network.md "Sends: a channel's rate").
constexpr double kChannel = 20.6e9;
constexpr double kNvlChunk = 524288.0;  // NCCL_P2P_NVL_CHUNKSIZE

// nccl-tests' sendrecv on one node of 8 GPUs at 1 TB/s: every GPU sends S to the next. The
// communicator of 8 has 32 p2p channels and nChannelsMin 32 / 8 = 4; a part above 16 MiB doubles
// a send's channels, up to 32. The channels, not the 1 TB/s links, bind up to 32 channels (659
// GB/s), and every part moves at 20.6 GB/s, so the fill is one chunk at 20.6 GB/s: T = 1 µs (GPU
// -> NVSwitch -> GPU) + 524288 / 20.6e9 + S / (channels × 20.6e9), channels 4 at 32 MiB (8 MiB
// parts), 8 at 128 MiB (16 MiB), 32 at 1 GiB (32 MiB).
TEST(NcclSends, NeighbourSendsOnOneNodeMoveAtTheirChannelsRate) {
  const Topology t = build_cluster_topology(nodes_of(1, 8, FabricKind::single_switch));
  const TransferPlan p = plan_neighbour_sends(every_gpu(t), t);
  ASSERT_EQ(p.phases.size(), 1u);
  ASSERT_EQ(p.phases[0].flows.size(), 8u);
  for (const FlowSpec& f : p.phases[0].flows) {
    EXPECT_EQ(f.dst, (f.src + 1) % 8);
    EXPECT_EQ(f.bytes_per_payload_byte, 1.0);
  }
  EXPECT_EQ(p.collective, CollectiveType::send_recv);
  EXPECT_EQ(p.ranks, 8u);
  // A group that cannot be one is refused, naming what it was for.
  const std::vector<EndpointId> none, twice{0, 1, 0}, outside{0, 8};
  for (const auto& [bad, why] : {std::pair{none, "neighbour sends over an empty group"},
                                 {twice, "group of neighbour sends lists a GPU twice"},
                                 {outside, "group member 8 is not a GPU of the topology"}}) {
    try {
      plan_neighbour_sends(bad, t);
      ADD_FAILURE() << why;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  }
  for (const auto& [size, channels] :
       {std::pair{33554432.0, 4.0}, std::pair{134217728.0, 8.0}, std::pair{1073741824.0, 32.0}}) {
    const double expected = 1e-6 + kNvlChunk / kChannel + size / (channels * kChannel);
    EXPECT_NEAR(run_flow_once(t, p, size), expected, 1e-9) << size;
  }
}

// A send_recv of plan_collective is one send on a communicator of its pair. On the 1 TB/s node:
// 32 p2p channels and nChannelsMin 32 / 2 = 16, so 64 MiB goes on 16 channels (4 MiB parts) at
// 16 × 20.6 GB/s. With 200 GB/s NVLink the pair has 10 ring channels, 16 p2p channels and
// nChannelsMin 8; 1 GiB doubles to 16 channels (64 MiB parts), 329.6 GB/s, so the link binds:
// T = 1 µs + fill + S / 200 GB/s, the fill one chunk at the part's share of the link, 200 / 16 =
// 12.5 GB/s (under a channel's 20.6): 524288 × 16 / 200e9 = 41.9 µs.
TEST(NcclSends, APairTakesTheChannelsOfATwoRankCommunicator) {
  const std::vector<EndpointId> pair{0, 1};
  const Topology fast = build_cluster_topology(nodes_of(1, 8, FabricKind::single_switch));
  const TransferPlan p =
      plan_collective(CollectiveType::send_recv, Algorithm::direct, pair, 0, fast);
  ASSERT_EQ(p.phases.size(), 1u);
  ASSERT_EQ(p.phases[0].flows.size(), 1u);
  const double s = 67108864.0;
  EXPECT_NEAR(run_flow_once(fast, p, s), 1e-6 + kNvlChunk / kChannel + s / (16 * kChannel), 1e-9);

  ClusterTopologySpec spec = nodes_of(1, 8, FabricKind::single_switch);
  spec.node.nvlink_bandwidth = Bandwidth::gigabytes_per_second(200);
  spec.node.pcie_bandwidth = Bandwidth::gigabytes_per_second(100);  // the route stays on NVLink
  const Topology slow = build_cluster_topology(spec);
  const TransferPlan q =
      plan_collective(CollectiveType::send_recv, Algorithm::direct, pair, 0, slow);
  const double g = 1073741824.0;
  EXPECT_NEAR(run_flow_once(slow, q, g), 1e-6 + kNvlChunk * 16 / 200e9 + g / 200e9, 1e-9);
}

// A send posted on a group's communicator (batch_isend_irecv, docs/network.md "Sends: the
// communicator") takes that communicator's channels. On the 1 TB/s node of 8 the communicator of
// all 8 has nChannelsMin 32 / 8 = 4, so 32 MiB from GPU 3 to GPU 4 goes on 4 channels (8 MiB
// parts), where the pair's own communicator gives 16 (above): T = 1 µs + 524288 / 20.6e9 + S /
// (c × 20.6e9), c = 4 and 16. On two nodes of 8 with 50 GB/s NICs, a communicator of GPUs 0-3 and
// 8-11: a peer across the network may take ⌈50 / 14⌉ = 4 channels, and NCCL takes the least over
// every peer for all (ncclTopoComputeP2pChannels), so even the NVLink send 1 -> 2 gets at most 4:
// its 8 ring channels (2 × 4 NICs) halve nChannelsMin from 4 to 1 for 8 ranks, and a 32 MiB
// send, its part above the 128 KiB chunk of a communicator across nodes, doubles to the peer's
// most, 4: 82.4 GB/s where the pair's communicator of one node gives 16 channels, 329.6 GB/s.
TEST(NcclSends, OnAGroupsCommunicatorASendTakesThatCommunicatorsChannels) {
  const Topology t = build_cluster_topology(nodes_of(1, 8, FabricKind::single_switch));
  const double s = 33554432.0;
  const TransferPlan on_group = plan_send(3, 4, every_gpu(t), t);
  ASSERT_EQ(on_group.phases.size(), 1u);
  ASSERT_EQ(on_group.phases[0].flows.size(), 1u);
  EXPECT_EQ(on_group.phases[0].flows[0].src, 3u);
  EXPECT_EQ(on_group.phases[0].flows[0].dst, 4u);
  EXPECT_EQ(on_group.ranks, 2u);  // the pair's shape, for a calibration profile's figures
  EXPECT_EQ(on_group.collective, CollectiveType::send_recv);
  EXPECT_NEAR(run_flow_once(t, on_group, s), 1e-6 + kNvlChunk / kChannel + s / (4 * kChannel),
              1e-9);
  const TransferPlan on_pair = plan_send(3, 4, {}, t);
  EXPECT_NEAR(run_flow_once(t, on_pair, s), 1e-6 + kNvlChunk / kChannel + s / (16 * kChannel),
              1e-9);

  ClusterTopologySpec spec = nodes_of(2, 8, FabricKind::single_switch);
  spec.node.nic_bandwidth = Bandwidth::gigabytes_per_second(50);
  const Topology two = build_cluster_topology(spec);
  const std::vector<EndpointId> comm{0, 1, 2, 3, 8, 9, 10, 11};
  const TransferPlan local = plan_send(1, 2, comm, two);
  const auto& parts = local.phases[0].pipeline.send_recv;
  EXPECT_EQ(parts.channels_min, 1.0);
  EXPECT_EQ(parts.channels(s), 4.0);
  EXPECT_NEAR(parts.rate_cap(s), 4 * kChannel, 1.0);
  EXPECT_EQ(plan_send(1, 2, {}, two).phases[0].pipeline.send_recv.channels(s), 16.0);
  // Its network send 3 -> 8 takes those 4 too, where the pair's communicator (2 ring channels,
  // one NIC a side) halves a peer's 4 to 2.
  EXPECT_EQ(plan_send(3, 8, comm, two).channels_at(s), 4u);
  EXPECT_EQ(plan_send(3, 8, {}, two).channels_at(s), 2u);

  // A communicator that does not hold both ends is refused.
  for (const auto& bad : {std::vector<EndpointId>{0, 1, 2}, std::vector<EndpointId>{3}}) {
    try {
      plan_send(3, 4, bad, t);
      ADD_FAILURE() << "a send outside its communicator";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("two distinct members of its communicator"),
                std::string::npos)
          << e.what();
    }
  }
}

// NCCL runs a channel as one thread block, on one SM, and a kernel's grid is the channels its
// parts use: channels_at(S) is what a run records for the op and the SMs it holds beside compute
// (engine/sm_sharing.hpp). On the 1 TB/s node of 8 (32 p2p channels): one 32 MiB send takes 16
// on its pair's communicator, 4 on the communicator of all 8 (above). An all-to-all of S on the 8
// posts 8 sends of S/8 from nChannelsMin 4: at 64 KiB each 8 KiB send fits one part (64 KiB the
// smallest), 8 blocks; at 8 MiB 4 parts each, 32; at 1 GiB each 128 MiB send doubles to 8 parts
// of 16 MiB, 64, but the kernel has the 32 channels only. A ring keeps its plan's channels.
TEST(NcclSends, AKernelRunsABlockAPartUpToTheCommunicatorsChannels) {
  const Topology t = build_cluster_topology(nodes_of(1, 8, FabricKind::single_switch));
  const double s = 33554432.0;
  EXPECT_EQ(plan_send(3, 4, {}, t).channels_at(s), 16u);
  EXPECT_EQ(plan_send(3, 4, every_gpu(t), t).channels_at(s), 4u);
  const TransferPlan a2a =
      plan_collective(CollectiveType::all_to_all, Algorithm::direct, every_gpu(t), 0, t);
  EXPECT_EQ(a2a.channels_at(65536.0), 8u);
  EXPECT_EQ(a2a.channels_at(8388608.0), 32u);
  EXPECT_EQ(a2a.channels_at(1073741824.0), 32u);
  const TransferPlan ring =
      plan_collective(CollectiveType::all_reduce, Algorithm::ring, every_gpu(t), 0, t);
  EXPECT_EQ(ring.channels_at(s), ring.channels);
}

// Across nodes. A pair on two nodes of one 25 GB/s NIC a GPU: NCCL's search gives the pair one
// channel (Ampere: 24 GB/s a channel, not duplicated), so one p2p channel carries the send in 128
// KiB chunks (NCCL_P2P_NET_CHUNKSIZE) at 20.6 GB/s, below the NIC: T = α + 131072 / 20.6e9 + S /
// 20.6e9. nccl-tests' sendrecv over both nodes' 16 GPUs sends GPU 7's bytes to GPU 8 through GPU
// 0, whose NIC is on GPU 8's rail (PXN): an NVLink flow 7 -> 0 and a rail flow 0 -> 8.
TEST(NcclSends, AcrossNodesOneChannelCarriesThePairsSendAndPxnRelaysTheRing) {
  const Topology t = build_cluster_topology(nodes_of(2, 8, FabricKind::single_switch));
  const std::vector<EndpointId> pair{0, 8};
  const TransferPlan p = plan_collective(CollectiveType::send_recv, Algorithm::direct, pair, 0, t);
  const double s = 1e9;
  const double alpha = t.route_latency(0, 8).seconds();
  EXPECT_NEAR(run_flow_once(t, p, s), alpha + 131072.0 / kChannel + s / kChannel, 1e-9);

  const TransferPlan ring = plan_neighbour_sends(every_gpu(t), t);
  const auto has = [&](EndpointId a, EndpointId b) {
    return std::any_of(ring.phases[0].flows.begin(), ring.phases[0].flows.end(),
                       [&](const FlowSpec& f) { return f.src == a && f.dst == b; });
  };
  EXPECT_TRUE(has(7, 0));
  EXPECT_TRUE(has(0, 8));
  EXPECT_FALSE(has(7, 8));
  EXPECT_TRUE(has(15, 8));  // and back round: 15 -> 8 -> 0
  EXPECT_TRUE(has(8, 0));
  EXPECT_EQ(ring.phases[0].flows.size(), 16u + 2u);  // 14 inside the nodes, 2 relays, 2 rails
}

}  // namespace
}  // namespace clustersim::engine
