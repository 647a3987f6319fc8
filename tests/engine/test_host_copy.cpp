// Copies between a GPU and its host memory (CopyDirection::to_host / from_host): a flow from the
// GPU to the CPU nearest it, over its PCIe link and switch, sharing them with NIC traffic that
// crosses the same switch. Times are bytes over the stated PCIe bandwidth, by hand.
#include <gtest/gtest.h>

#include <sstream>

#include "engine/network/network_model.hpp"
#include "engine/simulator.hpp"
#include "engine/topology_builders.hpp"
#include "engine/trace.hpp"

namespace clustersim::engine {
namespace {

class NoCompute : public ComputeModel {
 public:
  Time duration(const Op&, double) const override { return Time::zero(); }
};

// Below a p2p channel's 20.6 GB/s (nccl::kP2pChannelGBps), so a send's one channel does not bind.
constexpr double kPcie = 16e9;  // bytes/s per direction
constexpr double kGB = 1e9;
// A send across nodes moves in 128 KiB chunks (NCCL_P2P_NET_CHUNKSIZE), through a sender and a
// receiver stage: its first chunk crosses one stage before the link runs full (docs/network.md
// "Sends"). Here one channel carries it, at the link's rate.
constexpr double kSendFill = 131072.0 / kPcie;

// Two PCIe nodes of 4 GPUs, 2 per PCIe switch, one NIC per switch (NICs on the switches, so a
// GPU's NIC traffic and its host copies share its GPU->switch link), zero latencies.
ClusterTopologySpec pcie_nodes(int nodes) {
  ClusterTopologySpec spec;
  spec.nodes = nodes;
  spec.node.fabric = IntraNodeFabric::pcie;
  spec.node.gpus = 4;
  spec.node.gpus_per_pcie_switch = 2;
  spec.node.cpus = 2;
  spec.node.nics = 2;
  spec.node.pcie_bandwidth = Bandwidth::bytes_per_second(kPcie);
  spec.node.pcie_latency = Time::zero();
  spec.node.nic_bandwidth = Bandwidth::bytes_per_second(kPcie);
  spec.fabric.kind = FabricKind::single_switch;
  spec.fabric.latency = Time::zero();
  return spec;
}

TEST(HostCopy, HostEndpointIsTheNearestCpuBehindThePcieSwitch) {
  const Topology t = build_cluster_topology(pcie_nodes(1));
  const EndpointId host = t.host_endpoint(0);
  EXPECT_TRUE(t.is_host_endpoint(host));
  EXPECT_FALSE(t.is_host_endpoint(0));
  EXPECT_EQ(t.vertex(t.endpoint_vertex(host)).kind, VertexKind::cpu);
  const auto down = t.route(0, host);
  ASSERT_EQ(down.size(), 2u);  // gpu0 -> pcie0 -> cpu0
  for (LinkId l : down)
    EXPECT_EQ(t.link(l).kind, LinkKind::pcie);
  EXPECT_EQ(t.vertex(t.link(down[0]).dst).kind, VertexKind::pcie_switch);
  EXPECT_EQ(t.route(host, 0).size(), 2u);
  // GPUs 2 and 3 sit under the second switch, on the second CPU.
  EXPECT_NE(t.endpoint_vertex(t.host_endpoint(2)), t.endpoint_vertex(host));
  EXPECT_EQ(t.node_of(host), 0);
}

struct Simulated {
  Schedule schedule;
  Timeline timeline;
};

Simulated simulate_flow(const Topology& topo, ScheduleBuilder&& b) {
  Simulated r;
  r.schedule = std::move(b).finish();
  auto net = make_network_model("flow", topo);
  NoCompute compute;
  r.timeline = simulate(r.schedule, topo, *net, compute);
  return r;
}

TEST(HostCopy, CopyTakesBytesOverPcieBandwidth) {
  const Topology topo = build_cluster_topology(pcie_nodes(1));
  ScheduleBuilder b(4);
  const StreamId d2h = b.stream("offload d2h");
  const StreamId h2d = b.stream("offload h2d");
  const OpId down = b.copy({0, d2h, Category::optimizer, "grads d2h"},
                           static_cast<std::uint64_t>(1 * kGB), CopyDirection::to_host);
  const OpId after[] = {down};
  const OpId up = b.copy({0, h2d, Category::optimizer, "params h2d", kNone, after},
                         static_cast<std::uint64_t>(2 * kGB), CopyDirection::from_host);
  const Simulated r = simulate_flow(topo, std::move(b));
  EXPECT_NEAR(r.timeline.end[down].seconds(), 1 * kGB / kPcie, 1e-9);  // 62.5 ms
  EXPECT_NEAR(r.timeline.end[up].seconds(), 3 * kGB / kPcie, 1e-9);    // + 125 ms
}

TEST(HostCopy, OppositeDirectionsDoNotShareBandwidth) {
  const Topology topo = build_cluster_topology(pcie_nodes(1));
  ScheduleBuilder b(4);
  const OpId down = b.copy({0, b.stream("d2h"), Category::optimizer, "d2h"},
                           static_cast<std::uint64_t>(kGB), CopyDirection::to_host);
  const OpId up = b.copy({0, b.stream("h2d"), Category::optimizer, "h2d"},
                         static_cast<std::uint64_t>(kGB), CopyDirection::from_host);
  const Simulated r = simulate_flow(topo, std::move(b));
  EXPECT_NEAR(r.timeline.end[down].seconds(), kGB / kPcie, 1e-9);
  EXPECT_NEAR(r.timeline.end[up].seconds(), kGB / kPcie, 1e-9);
}

// GPU 0 sends 1 GB to node 1 through the NIC on its own PCIe switch while it copies 1 GB to its
// host: both cross gpu0 -> pcie0 at 16 GB/s, so each gets 8 GB/s: 125 ms instead of 62.5. The
// send's flow starts after its fill f, so the copy runs alone for f and ends f early, after which
// the send takes the whole link for its last f · B bytes: the send ends at 2 G / B, the copy at
// 2 G / B − f.
TEST(HostCopy, CompetesWithNicTrafficOnTheSamePcieLink) {
  const Topology topo = build_cluster_topology(pcie_nodes(2));
  for (const bool with_copy : {false, true}) {
    ScheduleBuilder b(8);
    const StreamId comm = b.stream("comm");
    const OpId send =
        b.send({0, comm, Category::dp_comm, "send"}, 4, static_cast<std::uint64_t>(kGB), 7);
    b.recv({4, comm, Category::dp_comm, "recv"}, 0, static_cast<std::uint64_t>(kGB), 7);
    OpId copy = kNone;
    if (with_copy)
      copy = b.copy({0, b.stream("d2h"), Category::optimizer, "d2h"},
                    static_cast<std::uint64_t>(kGB), CopyDirection::to_host);
    const Simulated r = simulate_flow(topo, std::move(b));
    const double expected = with_copy ? 2.0 * kGB / kPcie : kSendFill + kGB / kPcie;
    EXPECT_NEAR(r.timeline.end[send].seconds(), expected, 1e-9) << with_copy;
    if (with_copy) {
      EXPECT_NEAR(r.timeline.end[copy].seconds(), 2.0 * kGB / kPcie - kSendFill, 1e-9);
    }
  }
}

// On a DGX-like node each GPU has its own NIC (GPUDirect RDMA beside the GPU): host copies and
// NIC traffic do not meet on the GPU's PCIe link.
TEST(HostCopy, OwnNicPerGpuDoesNotShareTheGpusPcieLink) {
  ClusterTopologySpec spec = pcie_nodes(2);
  spec.node.nics = 4;
  const Topology topo = build_cluster_topology(spec);
  ScheduleBuilder b(8);
  const StreamId comm = b.stream("comm");
  const OpId send =
      b.send({0, comm, Category::dp_comm, "send"}, 4, static_cast<std::uint64_t>(kGB), 7);
  b.recv({4, comm, Category::dp_comm, "recv"}, 0, static_cast<std::uint64_t>(kGB), 7);
  const OpId copy = b.copy({0, b.stream("d2h"), Category::optimizer, "d2h"},
                           static_cast<std::uint64_t>(kGB), CopyDirection::to_host);
  const Simulated r = simulate_flow(topo, std::move(b));
  EXPECT_NEAR(r.timeline.end[send].seconds(), kSendFill + kGB / kPcie, 1e-9);
  EXPECT_NEAR(r.timeline.end[copy].seconds(), kGB / kPcie, 1e-9);
}

// The trace shows a host copy as a slice on its stream with its direction, and draws no
// send/recv arrow for it (it has no peer).
TEST(HostCopy, TraceShowsTheDirection) {
  const Topology topo = build_cluster_topology(pcie_nodes(1));
  ScheduleBuilder b(4);
  b.copy({0, b.stream("offload d2h"), Category::optimizer, "grads d2h"}, 1000,
         CopyDirection::to_host);
  b.copy({0, b.stream("offload h2d"), Category::optimizer, "params h2d"}, 1000,
         CopyDirection::from_host);
  const Simulated r = simulate_flow(topo, std::move(b));
  std::ostringstream out;
  write_trace(out, r.schedule, r.timeline, topo);
  const std::string text = out.str();
  EXPECT_NE(text.find("\"direction\":\"device-to-host\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"direction\":\"host-to-device\""), std::string::npos);
  EXPECT_EQ(text.find("\"p2p\""), std::string::npos);
}

}  // namespace
}  // namespace clustersim::engine
