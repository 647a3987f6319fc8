// A fat tree of three levels (fabric.leaves_per_pod): pods of leaves with their own spines, joined
// by core switches at pod_oversubscription. Every count, path, bandwidth and time below is worked
// out by hand from the spec in the test (the arithmetic is in the comments).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "engine/network/network_model.hpp"
#include "engine/topology.hpp"
#include "engine/topology_builders.hpp"
#include "tests/engine/topology_test_helpers.hpp"

namespace clustersim::engine {
namespace {

using test::count_kind;
using test::path;

constexpr double kGB = 1e9;

// test::small_nodes_on_leaves_of_four: leaf l holds nodes 2l and 2l + 1 (GPU endpoints
// 4l .. 4l + 3), each GPU with its own 25 GB/s NIC.
ClusterTopologySpec pods(int nodes, int leaves_per_pod, int spines, int cores,
                         double pod_oversubscription) {
  ClusterTopologySpec s = test::small_nodes_on_leaves_of_four(nodes);
  s.fabric.spines = spines;
  s.fabric.leaves_per_pod = leaves_per_pod;
  s.fabric.cores = cores;
  s.fabric.pod_oversubscription = pod_oversubscription;
  return s;
}

// Sum of the bandwidths of the links from vertices named `from_prefix`* to `to_kind` vertices.
double uplink_sum(const Topology& t, const std::string& from_prefix, VertexKind to_kind) {
  double sum = 0.0;
  for (LinkId l = 0; l < t.num_links(); ++l) {
    const LinkInfo& k = t.link(l);
    if (t.vertex(k.src).name.rfind(from_prefix, 0) == 0 && t.vertex(k.dst).kind == to_kind)
      sum += k.bandwidth.bytes_per_second();
  }
  return sum;
}

TEST(TopologyPods, ThreeLevelsHaveTheirSwitchesCablesAndTrunks) {
  // 8 nodes: 16 NIC ports on 4 leaves; 2 leaves per pod -> pod0 {leaf0, leaf1}, pod1 {leaf2,
  // leaf3}; 2 spines per pod, 2 cores, 4:1 between pods.
  const Topology t = build_cluster_topology(pods(8, 2, 2, 2, 4.0));
  // Vertices: 8 nodes × 7 (2 GPUs, nvswitch, cpu, pcie0, 2 NICs) + 4 leaves + 2 × 2 pod spines
  // + 2 cores = 66. Cables: 8 × 7 + 16 NIC-leaf + 4 leaves × 2 spines + 4 pod spines × 2 cores
  // = 88, two links each.
  EXPECT_EQ(t.num_vertices(), 66u);
  EXPECT_EQ(t.num_links(), 176u);
  EXPECT_EQ(count_kind(t, VertexKind::spine_switch), 4u);
  EXPECT_EQ(count_kind(t, VertexKind::core_switch), 2u);
  // A leaf's trunk to each of its pod's spines: 4 NICs × 25 GB/s / 1 / 2 spines = 50 GB/s. A pod
  // spine's to each core: the pod's 8 NICs × 25 GB/s / 1 / 2 spines / 4 / 2 cores = 12.5 GB/s,
  // so a pod's uplinks to the cores sum to its 200 GB/s of NICs / 4 = 50 GB/s.
  EXPECT_EQ(uplink_sum(t, "leaf0", VertexKind::spine_switch), 100 * kGB);
  EXPECT_EQ(uplink_sum(t, "pod0.spine0", VertexKind::core_switch), 25 * kGB);
  EXPECT_EQ(uplink_sum(t, "pod0.", VertexKind::core_switch), 50 * kGB);
  EXPECT_EQ(uplink_sum(t, "pod1.", VertexKind::core_switch), 50 * kGB);
}

TEST(TopologyPods, RoutesTurnAtTheLowestSwitchTheyShare) {
  const Topology t = build_cluster_topology(pods(8, 2, 2, 2, 4.0));
  // Same leaf (n0 -> n1, endpoints 0 -> 2): the leaf.
  EXPECT_EQ(path(t, 0, 2),
            (std::vector<std::string>{"n0.gpu0", "n0.nic0", "leaf0", "n1.nic0", "n1.gpu0"}));
  // Same pod, other leaf (n0 -> n2, 0 -> 4): leaf0 -> a pod0 spine -> leaf1; the NIC's 25 GB/s
  // is narrower than the 50 GB/s trunk. Latency: 2 PCIe (0.4 us) + 4 fabric links (1 us).
  const auto in_pod = path(t, 0, 4);
  ASSERT_EQ(in_pod.size(), 7u);
  EXPECT_EQ(in_pod[3].rfind("pod0.spine", 0), 0u);
  EXPECT_EQ(t.route_bandwidth(0, 4).bytes_per_second(), 25 * kGB);
  EXPECT_EQ(t.route_latency(0, 4), Time::from_ps(4'800'000));
  // Other pod (n0 -> n4, 0 -> 8): leaf0 -> pod0 spine -> core -> pod1 spine -> leaf2; 6 fabric
  // links: 0.8 + 6 = 6.8 us; narrowest the 12.5 GB/s spine-core trunk.
  const auto across = path(t, 0, 8);
  ASSERT_EQ(across.size(), 9u);
  EXPECT_EQ(across[2], "leaf0");
  EXPECT_EQ(across[3].rfind("pod0.spine", 0), 0u);
  EXPECT_EQ(across[4].rfind("core", 0), 0u);
  EXPECT_EQ(across[5].rfind("pod1.spine", 0), 0u);
  EXPECT_EQ(across[6], "leaf2");
  EXPECT_EQ(t.route_latency(0, 8), Time::from_ps(6'800'000));
  EXPECT_EQ(t.route_bandwidth(0, 8).bytes_per_second(), 12.5 * kGB);
}

TEST(TopologyPods, APartialLastPodGetsTrunksForItsOwnNics) {
  // 6 nodes: 12 ports on 3 leaves; pods of 2 leaves -> pod1 holds leaf2 alone. Its spine's trunk
  // to each core: 4 NICs × 25 GB/s / 1 / 2 spines / 4 / 2 cores = 6.25 GB/s.
  const Topology t = build_cluster_topology(pods(6, 2, 2, 2, 4.0));
  EXPECT_EQ(uplink_sum(t, "pod1.spine0", VertexKind::core_switch), 12.5 * kGB);
  EXPECT_EQ(uplink_sum(t, "pod1.", VertexKind::core_switch), 25 * kGB);
  EXPECT_EQ(t.route_bandwidth(8, 0).bytes_per_second(), 6.25 * kGB);
}

TEST(TopologyPods, TrafficBetweenPodsSharesTheirOversubscribedUplinks) {
  // 4 nodes, one leaf per pod (pod0: n0, n1 = endpoints 0-3; pod1: n2, n3 = 4-7), 1 spine,
  // 1 core. Leaf -> spine: 4 × 25 / 1 = 100 GB/s; spine -> core: 100 / 2 = 50 GB/s at 2:1.
  // GPU i of pod0 sends S = 1e9 bytes to GPU i of pod1, all four at once: each is alone on its
  // 25 GB/s NIC, but the four share the 50 GB/s between the pods: 12.5 GB/s each, S / 12.5 GB/s
  // = 0.08 s. Without pods (the same leaves under one spine, 100 GB/s uplinks) each runs at its
  // NIC's 25 GB/s: 0.04 s.
  for (const auto& [pods_on, want] : {std::pair{true, 0.08}, std::pair{false, 0.04}}) {
    ClusterTopologySpec spec = pods(4, pods_on ? 1 : 0, 1, 1, pods_on ? 2.0 : 1.0);
    const Topology t = build_cluster_topology(spec);
    auto model = make_network_model("flow", t);
    std::vector<TransferPlan> plans(4);  // the model reads a plan until its transfer ends
    for (EndpointId i = 0; i < 4; ++i) {
      Phase phase;
      phase.flows = {FlowSpec{i, i + 4, 1.0}};
      plans[i] = TransferPlan{{phase}};
      model->start(i, plans[i], 1e9, Time::zero());
    }
    std::vector<TransferId> done;
    Time now = Time::zero();
    while (done.size() < 4) {
      now = model->next_event_time();
      model->advance(now, done);
    }
    EXPECT_NEAR(now.seconds(), want, 1e-12) << (pods_on ? "pods" : "no pods");
  }
}

TEST(TopologyPods, PodKeysOutsideAFatTreeOfPodsNameTheField) {
  struct Bad {
    std::string field;
    ClusterTopologySpec spec;
  };
  ClusterTopologySpec rails = pods(4, 1, 1, 1, 1.0);
  rails.fabric.kind = FabricKind::rail_optimized;
  std::vector<Bad> cases = {
      {"fabric.leaves_per_pod", rails},
      {"fabric.leaves_per_pod", pods(4, -1, 1, 1, 1.0)},
      {"fabric.pod_oversubscription", pods(4, 0, 1, 1, 2.0)},  // without pods
      {"fabric.cores", pods(4, 0, 1, 2, 1.0)},                 // without pods
      {"fabric.pod_oversubscription", pods(4, 1, 1, 1, 0.5)},
      {"fabric.cores", pods(4, 1, 1, 0, 1.0)},
  };
  for (const Bad& c : cases) {
    try {
      build_cluster_topology(c.spec);
      ADD_FAILURE() << "no exception for " << c.field;
    } catch (const std::invalid_argument& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("cluster topology: " + c.field + " "), std::string::npos) << msg;
      EXPECT_NE(msg.find("allowed"), std::string::npos) << msg;
    }
  }
}

}  // namespace
}  // namespace clustersim::engine
