// Topology builders and routing. Every expected count, path, latency and bandwidth below is worked
// out by hand from the spec in the test (the arithmetic is in the comments).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/topology.hpp"
#include "engine/topology_builders.hpp"
#include "tests/engine/topology_test_helpers.hpp"

namespace clustersim::engine {
namespace {

using test::count_kind;
using test::path;

constexpr double kGB = 1e9;

const LinkInfo& link_named(const Topology& t, const std::string& name) {
  for (LinkId l = 0; l < t.num_links(); ++l)
    if (t.link(l).name == name) return t.link(l);
  throw std::runtime_error("no link " + name);
}

// A DGX-A100-like node: 8 GPUs on one NVSwitch, 4 PCIe switches of 2 GPUs, 2 CPUs, 8 NICs.
ClusterTopologySpec dgx(int nodes) {
  ClusterTopologySpec s;
  s.nodes = nodes;
  s.node.fabric = IntraNodeFabric::nvswitch;
  s.node.gpus = 8;
  s.node.nvlink_bandwidth = Bandwidth::gigabytes_per_second(300);
  s.node.nvlink_latency = Time::from_ps(500'000);
  s.node.pcie_bandwidth = Bandwidth::gigabytes_per_second(32);
  s.node.pcie_latency = Time::from_ps(400'000);
  s.node.gpus_per_pcie_switch = 2;
  s.node.cpus = 2;
  s.node.nics = 8;
  s.node.nic_bandwidth = Bandwidth::gigabits_per_second(100);  // 12.5 GB/s
  s.fabric.latency = Time::from_ps(1'000'000);
  return s;
}

// A PCIe box: 8 GPUs, 2 per PCIe switch (4 switches: pcie0,1 on cpu0, pcie2,3 on cpu1).
ClusterTopologySpec pcie_box() {
  ClusterTopologySpec s;
  s.node.fabric = IntraNodeFabric::pcie;
  s.node.gpus = 8;
  s.node.gpus_per_pcie_switch = 2;
  s.node.cpus = 2;
  s.node.pcie_bandwidth = Bandwidth::gigabytes_per_second(25);
  s.node.pcie_latency = Time::from_ps(300'000);
  s.node.cpu_interconnect_bandwidth = Bandwidth::gigabytes_per_second(20);
  s.node.cpu_interconnect_latency = Time::from_ps(200'000);
  s.node.nvlink_bandwidth = Bandwidth::gigabytes_per_second(50);
  s.node.nvlink_latency = Time::from_ps(100'000);
  s.node.nics = 0;
  return s;
}

// Four small NVSwitch nodes (2 GPUs, 1 PCIe switch, 1 CPU, 2 NICs of 25 GB/s) on a fat tree of
// 4-port leaves: 8 NIC ports -> leaf0 holds n0, n1 and leaf1 holds n2, n3; 4 spines, 2:1.
ClusterTopologySpec small_fat_tree() {
  ClusterTopologySpec s = test::small_nodes_on_leaves_of_four(4);
  s.fabric.spines = 4;
  s.fabric.oversubscription = 2.0;
  s.fabric.link_kind = LinkKind::ethernet;
  return s;
}

TEST(TopologyBuilders, DgxNodeHasTheExpectedVerticesAndLinks) {
  const Topology t = build_cluster_topology(dgx(1));
  // Vertices: 8 GPUs + 1 NVSwitch + 2 CPUs + 8/2 = 4 PCIe switches + 8 NICs = 23.
  EXPECT_EQ(t.num_vertices(), 23u);
  // Cables: 8 GPU-NVSwitch + 1 CPU-CPU + 4 switch-CPU + 8 GPU-switch + 8 GPU-NIC = 29,
  // each two directed links = 58.
  EXPECT_EQ(t.num_links(), 58u);
  EXPECT_EQ(t.num_gpus(), 8u);
  EXPECT_EQ(t.num_nodes(), 1);
  EXPECT_EQ(count_kind(t, VertexKind::nvswitch), 1u);
  EXPECT_EQ(count_kind(t, VertexKind::pcie_switch), 4u);
  EXPECT_EQ(count_kind(t, VertexKind::cpu), 2u);
  EXPECT_EQ(count_kind(t, VertexKind::nic), 8u);
  // Switches spread evenly: pcie0,1 on cpu0 and pcie2,3 on cpu1; GPUs 6,7 on pcie3.
  EXPECT_EQ(link_named(t, "n0.pcie1->n0.cpu0").kind, LinkKind::pcie);
  EXPECT_EQ(link_named(t, "n0.pcie2->n0.cpu1").kind, LinkKind::pcie);
  EXPECT_EQ(link_named(t, "n0.gpu7->n0.pcie3").kind, LinkKind::pcie);
  EXPECT_EQ(link_named(t, "n0.cpu0->n0.cpu1").kind, LinkKind::cpu_interconnect);
  // One NIC per GPU: linked to its GPU with the PCIe bandwidth (32 GB/s).
  EXPECT_EQ(link_named(t, "n0.gpu5->n0.nic5").bandwidth.bytes_per_second(), 32 * kGB);
}

TEST(TopologyBuilders, GpusAreNumberedNodeMajor) {
  const Topology t = build_cluster_topology(dgx(2));
  // endpoint = node·8 + local: 11 = 1·8 + 3.
  EXPECT_EQ(t.vertex(t.gpu_vertex(11)).name, "n1.gpu3");
  EXPECT_EQ(t.node_of(11), 1);
  EXPECT_EQ(t.vertex(t.gpu_vertex(7)).name, "n0.gpu7");
  EXPECT_EQ(t.num_nodes(), 2);
}

TEST(TopologyRoutes, NvswitchNodeUsesTheSwitchEvenWherePcieIsAsShort) {
  const Topology t = build_cluster_topology(dgx(1));
  // GPUs 0 and 1 share pcie0, so GPU->pcie0->GPU is also 2 hops; NVLink (300 GB/s) must win
  // over PCIe (32 GB/s) as DESIGN.md requires.
  for (EndpointId b : {1u, 7u}) {
    const auto p = path(t, 0, b);
    EXPECT_EQ(p,
              (std::vector<std::string>{"n0.gpu0", "n0.nvswitch", t.vertex(t.gpu_vertex(b)).name}));
    for (LinkId l : t.route(0, b))
      EXPECT_EQ(t.link(l).kind, LinkKind::nvlink);
    EXPECT_EQ(t.route_latency(0, b), Time::from_ps(2 * 500'000));  // 2 × nvlink_latency
    EXPECT_EQ(t.route_bandwidth(0, b).bytes_per_second(), 300 * kGB);
  }
  EXPECT_TRUE(t.route(3, 3).empty());
}

TEST(TopologyRoutes, PcieNodeGoesThroughSwitchCpuAndInterconnect) {
  const Topology t = build_cluster_topology(pcie_box());
  // 8 GPUs + 2 CPUs + 4 switches = 14 vertices; cables 1 CPU-CPU + 4 switch-CPU + 8 GPU-switch
  // = 13 -> 26 directed links.
  EXPECT_EQ(t.num_vertices(), 14u);
  EXPECT_EQ(t.num_links(), 26u);
  // Same switch: GPU -> switch -> GPU, 2 × 300 ns.
  EXPECT_EQ(path(t, 0, 1), (std::vector<std::string>{"n0.gpu0", "n0.pcie0", "n0.gpu1"}));
  EXPECT_EQ(t.route_latency(0, 1), Time::from_ps(600'000));
  // Different switches, same CPU: up through cpu0, 4 PCIe links = 1.2 us.
  EXPECT_EQ(path(t, 0, 2),
            (std::vector<std::string>{"n0.gpu0", "n0.pcie0", "n0.cpu0", "n0.pcie1", "n0.gpu2"}));
  EXPECT_EQ(t.route_latency(0, 2), Time::from_ps(1'200'000));
  // Across CPUs: 4 PCIe links + 1 interconnect = 4·300 + 200 = 1400 ns; the 20 GB/s interconnect
  // is narrower than the 25 GB/s PCIe links.
  EXPECT_EQ(path(t, 0, 7), (std::vector<std::string>{"n0.gpu0", "n0.pcie0", "n0.cpu0", "n0.cpu1",
                                                     "n0.pcie3", "n0.gpu7"}));
  EXPECT_EQ(t.route_latency(0, 7), Time::from_ps(1'400'000));
  EXPECT_EQ(t.route_bandwidth(0, 7).bytes_per_second(), 20 * kGB);
}

TEST(TopologyRoutes, NvlinkBridgesJoinPairsOnly) {
  ClusterTopologySpec s = pcie_box();
  s.node.nvlink_bridges = true;
  const Topology t = build_cluster_topology(s);
  // 26 links of the PCIe box + 4 bridges (0-1, 2-3, 4-5, 6-7) × 2 directions = 34.
  EXPECT_EQ(t.num_links(), 34u);
  // Bridged pair: one NVLink hop, 100 ns, 50 GB/s.
  EXPECT_EQ(path(t, 0, 1), (std::vector<std::string>{"n0.gpu0", "n0.gpu1"}));
  EXPECT_EQ(t.link(t.route(0, 1)[0]).kind, LinkKind::nvlink);
  EXPECT_EQ(t.route_latency(0, 1), Time::from_ps(100'000));
  EXPECT_EQ(t.route_bandwidth(0, 1).bytes_per_second(), 50 * kGB);
  // 1 and 2 are not bridged, and GPU 0 or 3 may not forward: through pcie0, cpu0, pcie1.
  EXPECT_EQ(path(t, 1, 2),
            (std::vector<std::string>{"n0.gpu1", "n0.pcie0", "n0.cpu0", "n0.pcie1", "n0.gpu2"}));
}

TEST(TopologyRoutes, GpusOnTheRootComplexRouteThroughTheCpu) {
  ClusterTopologySpec s = pcie_box();
  s.node.gpus = 4;
  s.node.gpus_per_pcie_switch = 0;  // GPU i on cpu ⌊i·2/4⌋: 0,1 on cpu0; 2,3 on cpu1
  const Topology t = build_cluster_topology(s);
  EXPECT_EQ(path(t, 0, 1), (std::vector<std::string>{"n0.gpu0", "n0.cpu0", "n0.gpu1"}));
  EXPECT_EQ(path(t, 0, 3), (std::vector<std::string>{"n0.gpu0", "n0.cpu0", "n0.cpu1", "n0.gpu3"}));
}

TEST(TopologyRoutes, BetweenNodesEachGpuUsesItsOwnNic) {
  ClusterTopologySpec s = dgx(2);
  s.fabric.kind = FabricKind::fat_tree;
  s.fabric.nics_per_leaf = 16;  // both nodes' 16 NICs on leaf0
  const Topology t = build_cluster_topology(s);
  // n0.gpu3 = endpoint 3, n1.gpu3 = endpoint 11.
  EXPECT_EQ(path(t, 3, 11),
            (std::vector<std::string>{"n0.gpu3", "n0.nic3", "leaf0", "n1.nic3", "n1.gpu3"}));
  // 2 PCIe links (400 ns) + 2 fabric links (1 us) = 2.8 us; narrowest: the 12.5 GB/s NIC link.
  EXPECT_EQ(t.route_latency(3, 11), Time::from_ps(2'800'000));
  EXPECT_EQ(t.route_bandwidth(3, 11).bytes_per_second(), 12.5 * kGB);
  EXPECT_EQ(link_named(t, "n0.nic3->leaf0").kind, LinkKind::ib);
}

TEST(TopologyRoutes, RailOptimizedKeepsRailsAndCrossesRailsAtASpine) {
  ClusterTopologySpec s = dgx(2);
  s.fabric.kind = FabricKind::rail_optimized;
  s.fabric.spines = 2;
  s.fabric.oversubscription = 2.0;
  const Topology t = build_cluster_topology(s);
  // Vertices: 2 × 23 + 8 rails + 2 spines = 56. Cables: 2 × 29 + 16 NIC-rail + 8 × 2 rail-spine
  // = 90 -> 180 directed links.
  EXPECT_EQ(t.num_vertices(), 56u);
  EXPECT_EQ(t.num_links(), 180u);
  // Trunk: 12.5 GB/s × 2 NICs per rail / 2 (oversubscription) / 2 spines = 6.25 GB/s.
  EXPECT_EQ(link_named(t, "rail5->spine1").bandwidth.bytes_per_second(), 6.25 * kGB);
  EXPECT_EQ(path(t, 3, 11),
            (std::vector<std::string>{"n0.gpu3", "n0.nic3", "rail3", "n1.nic3", "n1.gpu3"}));
  // n0.gpu0 -> n1.gpu3: rail0 to rail3 through a spine; 6 links, narrowest the 6.25 GB/s trunk.
  const auto p = path(t, 0, 11);
  ASSERT_EQ(p.size(), 7u);
  EXPECT_EQ(p[2], "rail0");
  EXPECT_EQ(p[3].rfind("spine", 0), 0u);
  EXPECT_EQ(p[4], "rail3");
  EXPECT_EQ(t.route_bandwidth(0, 11).bytes_per_second(), 6.25 * kGB);
}

TEST(TopologyRoutes, FatTreeCrossesLeavesThroughASpineOnly) {
  const Topology t = build_cluster_topology(small_fat_tree());
  // Per node: 2 GPUs + nvswitch + cpu + pcie0 + 2 NICs = 7 vertices, cables 2 NVLink + 1
  // switch-CPU + 2 GPU-switch + 2 GPU-NIC = 7. Total: 28 + 2 leaves + 4 spines = 34 vertices,
  // 28 + 8 NIC-leaf + 2·4 leaf-spine = 44 cables -> 88 links.
  EXPECT_EQ(t.num_vertices(), 34u);
  EXPECT_EQ(t.num_links(), 88u);
  // Same leaf (n0 -> n1, endpoints 0 -> 2): no spine; narrowest the 25 GB/s NIC link.
  EXPECT_EQ(path(t, 0, 2),
            (std::vector<std::string>{"n0.gpu0", "n0.nic0", "leaf0", "n1.nic0", "n1.gpu0"}));
  EXPECT_EQ(t.route_bandwidth(0, 2).bytes_per_second(), 25 * kGB);
  // Cross leaf (n0 -> n2, endpoints 0 -> 4): leaf0 -> spine -> leaf1; 2 PCIe (400 ns) + 4 fabric
  // links (1 us) = 4.8 us; all fabric links are the configured Ethernet.
  const auto p = path(t, 0, 4);
  ASSERT_EQ(p.size(), 7u);
  EXPECT_EQ(p[2], "leaf0");
  EXPECT_EQ(p[3].rfind("spine", 0), 0u);
  EXPECT_EQ(p[4], "leaf1");
  EXPECT_EQ(t.route_latency(0, 4), Time::from_ps(4'800'000));
  for (std::size_t i = 1; i < 5; ++i)
    EXPECT_EQ(t.link(t.route(0, 4)[i]).kind, LinkKind::ethernet);
  // Trunk per spine: 4 NICs × 25 GB/s / 2 / 4 spines = 12.5 GB/s, the cross-leaf bottleneck.
  EXPECT_EQ(t.route_bandwidth(0, 4).bytes_per_second(), 12.5 * kGB);
}

TEST(TopologyRoutes, OversubscriptionHalvesTheLeafUplinks) {
  const Topology t = build_cluster_topology(small_fat_tree());
  // leaf0's downlinks: 4 NICs × 25 GB/s = 100 GB/s; at 2:1 its uplinks sum to 50 GB/s.
  double down = 0.0, up = 0.0;
  for (LinkId l = 0; l < t.num_links(); ++l) {
    const LinkInfo& k = t.link(l);
    if (t.vertex(k.dst).name != "leaf0" && t.vertex(k.src).name != "leaf0") continue;
    if (t.vertex(k.src).kind == VertexKind::nic) down += k.bandwidth.bytes_per_second();
    if (t.vertex(k.dst).kind == VertexKind::spine_switch) up += k.bandwidth.bytes_per_second();
  }
  EXPECT_EQ(down, 100 * kGB);
  EXPECT_EQ(up, 50 * kGB);
}

TEST(TopologyRoutes, EqualCostChoiceIsDeterministicAndSpreads) {
  const Topology a = build_cluster_topology(small_fat_tree());
  const Topology b = build_cluster_topology(small_fat_tree());
  std::set<std::string> spines;
  // Every cross-leaf pair: sources on n0, n1 (endpoints 0-3), destinations on n2, n3 (4-7).
  for (EndpointId src = 0; src < 4; ++src)
    for (EndpointId dst = 4; dst < 8; ++dst) {
      const auto first = path(a, src, dst);
      EXPECT_EQ(path(a, src, dst), first) << "same route when asked twice";
      EXPECT_EQ(path(b, src, dst), first) << "same route in an identical topology";
      spines.insert(first[3]);
    }
  // 16 pairs over 4 spines: a hash choice uses more than one of them.
  EXPECT_GT(spines.size(), 1u);
}

TEST(TopologyRoutes, SharedNicsHangOffThePcieSwitches) {
  ClusterTopologySpec s = dgx(2);
  s.fabric.kind = FabricKind::single_switch;
  s.node.nics = 2;  // NIC j on pcie ⌊j·4/2⌋: nic0 on pcie0, nic1 on pcie2
  const Topology t = build_cluster_topology(s);
  // 2 × (8 + 1 + 2 + 4 + 2) + 1 switch = 35 vertices.
  EXPECT_EQ(t.num_vertices(), 35u);
  EXPECT_EQ(link_named(t, "n0.pcie2->n0.nic1").kind, LinkKind::pcie);
  // GPU 2 sits on pcie1, which has no NIC: over cpu0 to pcie0's nic0, and the same at the far end.
  EXPECT_EQ(path(t, 2, 10), (std::vector<std::string>{"n0.gpu2", "n0.pcie1", "n0.cpu0", "n0.pcie0",
                                                      "n0.nic0", "switch", "n1.nic0", "n1.pcie0",
                                                      "n1.cpu0", "n1.pcie1", "n1.gpu2"}));
  // GPU 4 on pcie2 uses nic1 next to it.
  EXPECT_EQ(path(t, 4, 12), (std::vector<std::string>{"n0.gpu4", "n0.pcie2", "n0.nic1", "switch",
                                                      "n1.nic1", "n1.pcie2", "n1.gpu4"}));
}

TEST(TopologyRoutes, NeverThroughAGpu) {
  ClusterTopologySpec s = pcie_box();
  s.nodes = 2;
  s.node.nvlink_bridges = true;
  s.node.nics = 8;
  s.node.nic_bandwidth = Bandwidth::gigabits_per_second(100);
  s.fabric.kind = FabricKind::single_switch;
  const Topology t = build_cluster_topology(s);
  for (EndpointId a = 0; a < t.num_gpus(); ++a)
    for (EndpointId b = 0; b < t.num_gpus(); ++b) {
      const auto r = t.route(a, b);
      for (std::size_t i = 0; i + 1 < r.size(); ++i)
        EXPECT_NE(t.vertex(t.link(r[i]).dst).kind, VertexKind::gpu) << a << "->" << b;
    }
  // n0.gpu1 -> n1.gpu0: gpu1's own NIC, never gpu0's NIC through the bridge.
  EXPECT_EQ(path(t, 1, 8),
            (std::vector<std::string>{"n0.gpu1", "n0.nic1", "switch", "n1.nic0", "n1.gpu0"}));
}

TEST(TopologyRoutes, UnreachableGpusThrow) {
  Topology t;
  const EndpointId a = t.add_gpu("a", 0);
  const EndpointId b = t.add_gpu("b", 0);
  const EndpointId c = t.add_gpu("c", 0);
  const EndpointId d = t.add_gpu("d", 0);
  const auto bw = Bandwidth::gigabytes_per_second(1);
  // a - b - c chained by GPU-to-GPU links: c is reachable from a only through b, which does not
  // forward. d has no links at all.
  t.add_link(t.gpu_vertex(a), t.gpu_vertex(b), bw, Time::zero(), LinkKind::nvlink);
  t.add_link(t.gpu_vertex(b), t.gpu_vertex(c), bw, Time::zero(), LinkKind::nvlink);
  EXPECT_EQ(t.route(a, b).size(), 1u);
  EXPECT_THROW(t.route(a, c), std::runtime_error);
  EXPECT_THROW(t.route(d, a), std::runtime_error);
  try {
    t.route(a, c);
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("c cannot be reached from a"), std::string::npos);
  }
}

// Two GPUs and no link at all: the route search has no bandwidth to rank and must still say
// the destination cannot be reached.
TEST(TopologyRoutes, GpusWithoutAnyLinkAreUnreachableNotACrash) {
  Topology t;
  const EndpointId a = t.add_gpu("a", 0);
  const EndpointId b = t.add_gpu("b", 0);
  EXPECT_THROW(t.route(a, b), std::runtime_error);
}

// Where an endpoint sits in small_fat_tree(): GPU e is n(e/2), under leaf (e/2)/2.
int leaf_of_small_fat_tree(EndpointId e) {
  return static_cast<int>(e / 2 / 2);
}

TEST(TopologyRoutes, EveryPairTakesTheClosedFormHopsLatencyAndBandwidthOfItsPlace) {
  const Topology t = build_cluster_topology(small_fat_tree());
  // Same node: GPU -> nvswitch -> GPU, 2 NVLink links (300 GB/s, 500 ns), not PCIe's 2 hops at
  // 32 GB/s. Same leaf: GPU -> NIC -> leaf -> NIC -> GPU, 2 PCIe links (400 ns) and 2 fabric
  // links (1 us), narrowest the 25 GB/s NIC. Across leaves: 2 more fabric links through a spine,
  // narrowest the 12.5 GB/s trunk (4 × 25 GB/s / 2 / 4 spines).
  for (EndpointId a = 0; a < t.num_gpus(); ++a)
    for (EndpointId b = 0; b < t.num_gpus(); ++b) {
      const auto r = t.route(a, b);
      if (a == b) {
        EXPECT_TRUE(r.empty());
        continue;
      }
      std::size_t hops = 6;
      double bandwidth = 12.5 * kGB;
      std::int64_t latency_ps = 4'800'000;
      if (t.node_of(a) == t.node_of(b)) {
        hops = 2, bandwidth = 300 * kGB, latency_ps = 1'000'000;
      } else if (leaf_of_small_fat_tree(a) == leaf_of_small_fat_tree(b)) {
        hops = 4, bandwidth = 25 * kGB, latency_ps = 2'800'000;
      }
      EXPECT_EQ(r.size(), hops) << a << "->" << b;
      EXPECT_EQ(t.route_bandwidth(a, b).bytes_per_second(), bandwidth) << a << "->" << b;
      EXPECT_EQ(t.route_latency(a, b), Time::from_ps(latency_ps)) << a << "->" << b;
      EXPECT_EQ(path(t, a, b).size(), hops + 1);  // a chain from a to b
    }
}

// The shortest hop count from `from` to `to` over paths that forward through no GPU, and the
// widest bottleneck among the paths of that length, by enumerating every simple path of each
// length in turn: an oracle that shares nothing with the route search. {0, -1}: unreachable.
struct ShortestWidest {
  std::size_t hops = 0;
  double widest = -1.0;
};

ShortestWidest brute_force_route(const Topology& t, VertexId from, VertexId to) {
  std::vector<std::vector<LinkId>> out(t.num_vertices());
  for (LinkId l = 0; l < t.num_links(); ++l)
    out[t.link(l).src].push_back(l);
  std::vector<bool> on(t.num_vertices(), false);
  for (std::size_t limit = 1; limit <= t.num_vertices(); ++limit) {
    double best = -1.0;
    bool cut = false;  // a path was stopped at the limit: a longer one may still arrive
    auto walk = [&](auto& self, VertexId v, std::size_t hops, double narrowest) -> void {
      if (v == to) {
        best = std::max(best, narrowest);
        return;
      }
      if (hops == limit) {
        cut = true;
        return;
      }
      on[v] = true;
      for (LinkId l : out[v]) {
        const VertexId w = t.link(l).dst;
        if (on[w] || (w != to && t.vertex(w).kind == VertexKind::gpu)) continue;
        self(self, w, hops + 1, std::min(narrowest, t.link(l).bandwidth.bytes_per_second()));
      }
      on[v] = false;
    };
    walk(walk, from, 0, std::numeric_limits<double>::infinity());
    if (best >= 0.0) return {limit, best};
    if (!cut) break;
  }
  return {};
}

// Every pair of endpoints (GPUs and host memories) of `t`: the route is a chain from one to the
// other of the brute-force hop count, through no GPU, its narrowest link the widest there is;
// pairs with no path throw.
void expect_shortest_widest_routes(const Topology& t) {
  const auto endpoints = static_cast<EndpointId>(2 * t.num_gpus());
  for (EndpointId a = 0; a < endpoints; ++a)
    for (EndpointId b = 0; b < endpoints; ++b) {
      const VertexId from = t.endpoint_vertex(a);
      const VertexId to = t.endpoint_vertex(b);
      if (from == to) {
        EXPECT_TRUE(t.route(a, b).empty());
        continue;
      }
      const ShortestWidest expected = brute_force_route(t, from, to);
      if (expected.widest < 0.0) {
        EXPECT_THROW(t.route(a, b), std::runtime_error) << a << "->" << b;
        continue;
      }
      const auto r = t.route(a, b);
      ASSERT_EQ(r.size(), expected.hops) << a << "->" << b;
      VertexId at = from;
      for (LinkId l : r) {
        EXPECT_EQ(t.link(l).src, at);
        if (at != from) {
          EXPECT_NE(t.vertex(at).kind, VertexKind::gpu) << a << "->" << b;
        }
        at = t.link(l).dst;
      }
      EXPECT_EQ(at, to);
      EXPECT_EQ(t.route_bandwidth(a, b).bytes_per_second(), expected.widest) << a << "->" << b;
    }
}

TEST(TopologyRoutes, RoutesAreTheShortestWidestPathsThroughNoGpuByBruteForce) {
  ClusterTopologySpec bridged = pcie_box();  // bridges beside PCIe, NICs on the PCIe switches
  bridged.nodes = 2;
  bridged.node.nvlink_bridges = true;
  bridged.node.nics = 2;
  bridged.node.nic_bandwidth = Bandwidth::gigabits_per_second(100);
  bridged.fabric.kind = FabricKind::single_switch;
  ClusterTopologySpec rails = dgx(2);
  rails.fabric.kind = FabricKind::rail_optimized;
  rails.fabric.spines = 2;
  ClusterTopologySpec partial = small_fat_tree();  // 6 NIC ports on 4-port leaves: leaf1 half
  partial.nodes = 3;                               // full, so its trunks are half as wide
  ClusterTopologySpec shared = dgx(2);
  shared.fabric.kind = FabricKind::single_switch;
  shared.node.nics = 2;
  for (const ClusterTopologySpec& spec : {bridged, rails, partial, shared, small_fat_tree()}) {
    const Topology t = build_cluster_topology(spec);
    expect_shortest_widest_routes(t);
    // The same routes asked in the opposite order from a fresh copy: nothing of one search leaks
    // into the next.
    const Topology fresh = build_cluster_topology(spec);
    const auto endpoints = static_cast<EndpointId>(2 * t.num_gpus());
    for (EndpointId a = endpoints; a-- > 0;)
      for (EndpointId b = endpoints; b-- > 0;) {
        if (t.endpoint_vertex(a) == t.endpoint_vertex(b)) continue;
        try {
          const auto first = t.route(a, b);
          const auto again = fresh.route(a, b);
          EXPECT_EQ(std::vector<LinkId>(again.begin(), again.end()),
                    std::vector<LinkId>(first.begin(), first.end()))
              << a << "->" << b;
        } catch (const std::runtime_error&) {
          EXPECT_THROW(fresh.route(a, b), std::runtime_error);
        }
      }
  }
}

TEST(TopologyRoutes, HostMemoryRoutesReachAcrossNodesOnlyWhereNicsHangOffTheSwitches) {
  // NICs on the PCIe switches (nic0 on pcie0, nic1 on pcie2): host memory of n0.gpu0 (n0.cpu0)
  // to n1.gpu4 goes cpu0 -> pcie0 -> nic0 -> switch -> n1.nic1 -> n1.pcie2 -> n1.gpu4.
  ClusterTopologySpec shared = dgx(2);
  shared.fabric.kind = FabricKind::single_switch;
  shared.node.nics = 2;
  const Topology t = build_cluster_topology(shared);
  const auto r = t.route(t.host_endpoint(0), 12);
  ASSERT_EQ(r.size(), 6u);
  EXPECT_EQ(t.vertex(t.link(r[0]).src).name, "n0.cpu0");
  EXPECT_EQ(t.vertex(t.link(r[5]).dst).name, "n1.gpu4");
  // One NIC per GPU, linked to the GPU itself: host memory reaches only its own node.
  const Topology own = build_cluster_topology(small_fat_tree());
  EXPECT_EQ(own.route(own.host_endpoint(0), 1).size(), 2u);  // cpu0 -> pcie0 -> gpu1
  EXPECT_EQ(own.route(0, own.host_endpoint(1)).size(), 2u);  // the same CPU
  EXPECT_THROW(own.route(own.host_endpoint(0), 2), std::runtime_error);
}

// A chain of 300 switches between two GPUs: the route search has no hop limit of its own.
TEST(TopologyRoutes, ALongChainIsRoutedEndToEnd) {
  Topology t;
  const EndpointId a = t.add_gpu("a", 0);
  const EndpointId b = t.add_gpu("b", 0);
  const auto bw = Bandwidth::gigabytes_per_second(1);
  VertexId at = t.gpu_vertex(a);
  for (int i = 0; i < 300; ++i) {
    const VertexId sw = t.add_vertex(VertexKind::pcie_switch, "s" + std::to_string(i), 0);
    t.add_link(at, sw, bw, Time::from_ps(1), LinkKind::pcie);
    at = sw;
  }
  t.add_link(at, t.gpu_vertex(b), bw, Time::from_ps(1), LinkKind::pcie);
  EXPECT_EQ(t.route(a, b).size(), 301u);
  EXPECT_EQ(t.route_latency(b, a), Time::from_ps(301));
}

struct BadSpec {
  const char* field;
  void (*mutate)(ClusterTopologySpec&);
};

TEST(TopologyBuilders, InvalidSpecsNameTheField) {
  const BadSpec cases[] = {
      {"nodes", [](ClusterTopologySpec& s) { s.nodes = 0; }},
      {"node.gpus", [](ClusterTopologySpec& s) { s.node.gpus = 0; }},
      {"node.cpus", [](ClusterTopologySpec& s) { s.node.cpus = 0; }},
      {"node.gpus_per_pcie_switch",
       [](ClusterTopologySpec& s) { s.node.gpus_per_pcie_switch = 3; }},
      {"node.gpus_per_pcie_switch",
       [](ClusterTopologySpec& s) { s.node.gpus_per_pcie_switch = -1; }},
      {"node.nics", [](ClusterTopologySpec& s) { s.node.nics = 9; }},
      {"node.nics", [](ClusterTopologySpec& s) { s.node.nics = 0; }},  // with 2 nodes
      {"node.nvlink_bandwidth",
       [](ClusterTopologySpec& s) { s.node.nvlink_bandwidth = Bandwidth::bytes_per_second(0); }},
      {"node.pcie_bandwidth",
       [](ClusterTopologySpec& s) { s.node.pcie_bandwidth = Bandwidth::bytes_per_second(-1); }},
      {"node.nic_bandwidth",
       [](ClusterTopologySpec& s) { s.node.nic_bandwidth = Bandwidth::bytes_per_second(0); }},
      {"node.pcie_latency",
       [](ClusterTopologySpec& s) { s.node.pcie_latency = Time::from_ps(-1); }},
      {"node.nvlink_bridges", [](ClusterTopologySpec& s) { s.node.nvlink_bridges = true; }},
      {"fabric.oversubscription", [](ClusterTopologySpec& s) { s.fabric.oversubscription = 0.5; }},
      {"fabric.nics_per_leaf", [](ClusterTopologySpec& s) { s.fabric.nics_per_leaf = 0; }},
      {"fabric.spines", [](ClusterTopologySpec& s) { s.fabric.spines = 0; }},
      {"fabric.latency", [](ClusterTopologySpec& s) { s.fabric.latency = Time::from_ps(-5); }},
  };
  for (const BadSpec& c : cases) {
    ClusterTopologySpec s = dgx(2);
    c.mutate(s);
    try {
      build_cluster_topology(s);
      ADD_FAILURE() << "no exception for " << c.field;
    } catch (const std::invalid_argument& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(std::string("cluster topology: ") + c.field + " "), std::string::npos)
          << msg;
      EXPECT_NE(msg.find("allowed"), std::string::npos) << msg;
    }
  }
  // Odd GPU count with bridges in a PCIe node.
  ClusterTopologySpec odd = pcie_box();
  odd.node.gpus = 3;
  odd.node.gpus_per_pcie_switch = 1;
  odd.node.nvlink_bridges = true;
  EXPECT_THROW(build_cluster_topology(odd), std::invalid_argument);
}

TEST(TopologyBuilders, SingleNodeNeedsNoNicsAndIgnoresTheFabric) {
  ClusterTopologySpec s = dgx(1);
  s.node.nics = 0;
  s.fabric.oversubscription = 0.5;  // would be rejected with more than one node
  s.fabric.spines = 0;
  const Topology t = build_cluster_topology(s);
  EXPECT_EQ(t.num_vertices(), 15u);  // 23 - 8 NICs
  EXPECT_EQ(count_kind(t, VertexKind::leaf_switch) + count_kind(t, VertexKind::spine_switch), 0u);
}

}  // namespace
}  // namespace clustersim::engine
