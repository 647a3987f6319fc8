// Several NICs per GPU (AWS p5: 32 EFA interfaces for 8 GPUs) and the network plugin's reported
// latency, against closed forms (docs/topology.md "Several NICs per GPU", docs/network.md
// "Protocols").
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "engine/network/collectives.hpp"
#include "engine/network/network_model.hpp"
#include "engine/topology_builders.hpp"
#include "tests/engine/run_flow.hpp"

namespace clustersim::engine {
namespace {

// Two nodes of 8 GPUs on NVLink of 1 TB/s (never the bound) and `nics` NICs of `nic_gbps` each.
ClusterTopologySpec two_nodes(int nics, double nic_gbps) {
  ClusterTopologySpec spec;
  spec.nodes = 2;
  spec.node.gpus = 8;
  spec.node.nics = nics;
  spec.node.nvlink_bandwidth = Bandwidth::gigabytes_per_second(1000);
  spec.node.pcie_bandwidth = Bandwidth::gigabytes_per_second(400);
  spec.node.nic_bandwidth = Bandwidth::gigabytes_per_second(nic_gbps);
  spec.fabric.kind = FabricKind::single_switch;
  return spec;
}

int count_vertices(const Topology& t, VertexKind kind) {
  int n = 0;
  for (VertexId v = 0; v < t.num_vertices(); ++v)
    n += t.vertex(v).kind == kind ? 1 : 0;
  return n;
}

TEST(NicRails, FourRailsAGpuAreOneDeviceOfTheirSummedBandwidth) {
  // 32 NICs of 6.25 GB/s on 8 GPUs: each GPU's 4 are one device of 25 GB/s, so the ring
  // all-reduce is the 8-NIC closed form 2(n−1)/n · S / (8 · 25 GB/s), n = 16, on 16 channels.
  EXPECT_EQ(nic_devices(two_nodes(32, 6.25).node), 8);
  EXPECT_EQ(rails_per_nic_device(two_nodes(32, 6.25).node), 4);
  EXPECT_EQ(rails_per_nic_device(two_nodes(8, 25).node), 1);
  EXPECT_EQ(nic_devices(two_nodes(2, 25).node), 2);
  const Topology t = build_cluster_topology(two_nodes(32, 6.25));
  EXPECT_EQ(count_vertices(t, VertexKind::nic), 16);  // 8 devices a node
  const auto m = all_gpus(t);
  EXPECT_EQ(collective_channels(m, t), 16);
  const TransferPlan p = plan_collective(CollectiveType::all_reduce, Algorithm::ring, m, 0, t);
  const double s = 4e9;
  const double n = 16;
  std::vector<double> bytes;
  const double got = run_flow_once(t, p, s, &bytes) - p.phases[0].latency.seconds();
  const double want = 2.0 * (n - 1) / n * s / (8 * 25e9);
  EXPECT_NEAR(got, want, 0.01 * want);
  int uplinks = 0;
  for (LinkId l = 0; l < t.num_links(); ++l) {
    const LinkInfo& info = t.link(l);
    if (t.vertex(info.src).kind != VertexKind::nic || info.kind != LinkKind::ib) continue;
    ++uplinks;
    EXPECT_DOUBLE_EQ(info.bandwidth.bytes_per_second(), 25e9) << info.name;
    EXPECT_NEAR(bytes[l], 2.0 * (n - 1) / n * s / 8, 1e-6 * s) << info.name;
  }
  EXPECT_EQ(uplinks, 16);
}

TEST(NicRails, AFatTreeCountsEveryRailAsAPort) {
  // 2 nodes × 32 interfaces of 12.5 GB/s under leaves of 32 ports: node i's four-rail devices
  // fill leaf i, and each leaf's trunk to its one spine is 32 · 12.5 / 2 = 200 GB/s at 2:1.
  ClusterTopologySpec spec = two_nodes(32, 12.5);
  spec.fabric.kind = FabricKind::fat_tree;
  spec.fabric.nics_per_leaf = 32;
  spec.fabric.oversubscription = 2.0;
  const Topology t = build_cluster_topology(spec);
  EXPECT_EQ(count_vertices(t, VertexKind::leaf_switch), 2);
  int trunks = 0;
  for (LinkId l = 0; l < t.num_links(); ++l) {
    const LinkInfo& info = t.link(l);
    const VertexKind src = t.vertex(info.src).kind;
    const VertexKind dst = t.vertex(info.dst).kind;
    if (src == VertexKind::leaf_switch && dst == VertexKind::spine_switch) {
      ++trunks;
      EXPECT_DOUBLE_EQ(info.bandwidth.bytes_per_second(), 200e9) << info.name;
    }
    if (src == VertexKind::nic && dst == VertexKind::leaf_switch) {
      EXPECT_DOUBLE_EQ(info.bandwidth.bytes_per_second(), 50e9) << info.name;
      EXPECT_EQ(info.name.substr(0, 2) == "n0" ? "leaf0" : "leaf1", t.vertex(info.dst).name);
    }
  }
  EXPECT_EQ(trunks, 2);
  // A leaf holds the whole devices that fit: with 6 ports a leaf, one four-rail device each, so
  // 16 leaves whose trunks carry 4 · 12.5 / 2 = 25 GB/s; fewer ports than rails is an error.
  spec.fabric.nics_per_leaf = 6;
  const Topology six = build_cluster_topology(spec);
  EXPECT_EQ(count_vertices(six, VertexKind::leaf_switch), 16);
  for (LinkId l = 0; l < six.num_links(); ++l) {
    const LinkInfo& info = six.link(l);
    if (six.vertex(info.src).kind == VertexKind::leaf_switch &&
        six.vertex(info.dst).kind == VertexKind::spine_switch) {
      EXPECT_DOUBLE_EQ(info.bandwidth.bytes_per_second(), 25e9) << info.name;
    }
  }
  spec.fabric.nics_per_leaf = 2;
  EXPECT_THROW(build_cluster_topology(spec), std::invalid_argument);
}

TEST(NicRails, ACountNeitherAtMostTheGpusNorAMultipleOfThemIsRejected) {
  try {
    build_cluster_topology(two_nodes(12, 25));
    FAIL() << "12 NICs for 8 GPUs was accepted";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("node.nics = 12"), std::string::npos) << what;
    EXPECT_NE(what.find("multiple"), std::string::npos) << what;
  }
  EXPECT_NO_THROW(build_cluster_topology(two_nodes(16, 25)));
}

// NCCL adds the plugin's latency to every network step of its latency model, twice for Simple
// (ncclTopoTuneModel: interLat += latencyInter, and again for Simple's flush): a ring across N
// nodes has N − 1 network steps for all_gather and 2(N − 1) for all_reduce; a tree all-reduce
// 2·log2(N). (Each per-step figure here, NCCL's network row plus the plugin's, is above the
// route's own 3 µs, which would otherwise set it: LL's ring row of 2.7 µs is not.)
TEST(NicRails, ThePluginsLatencyAddsToEveryNetworkStepOfNcclsModel) {
  const double plugin = 75e-6;
  const auto latency = [&](int nodes, CollectiveType type, Algorithm a, Protocol p, bool with) {
    ClusterTopologySpec spec = two_nodes(8, 50);
    spec.nodes = nodes;
    if (with) spec.node.nic_plugin_latency = Time::from_seconds(plugin);
    const Topology t = build_cluster_topology(spec);
    return plan_collective(type, a, all_gpus(t), 0, t, p).phases[0].latency.seconds();
  };
  const auto added = [&](int nodes, CollectiveType type, Algorithm a, Protocol p) {
    return latency(nodes, type, a, p, true) - latency(nodes, type, a, p, false);
  };
  EXPECT_NEAR(added(2, CollectiveType::all_gather, Algorithm::ring, Protocol::ll128), plugin, 1e-9);
  EXPECT_NEAR(added(4, CollectiveType::all_gather, Algorithm::ring, Protocol::ll128), 3 * plugin,
              1e-9);
  EXPECT_NEAR(added(4, CollectiveType::all_gather, Algorithm::ring, Protocol::simple),
              3 * 2 * plugin, 1e-9);
  EXPECT_NEAR(added(2, CollectiveType::all_reduce, Algorithm::ring, Protocol::ll128), 2 * plugin,
              1e-9);
  EXPECT_NEAR(added(4, CollectiveType::all_reduce, Algorithm::tree, Protocol::ll), 4 * plugin,
              1e-9);
  // One node has no network step.
  EXPECT_NEAR(added(1, CollectiveType::all_gather, Algorithm::ring, Protocol::ll128), 0.0, 1e-12);
}

TEST(NicRails, ANegativePluginLatencyIsRejected) {
  ClusterTopologySpec spec = two_nodes(8, 50);
  spec.node.nic_plugin_latency = Time::from_seconds(-1e-6);
  EXPECT_THROW(build_cluster_topology(spec), std::invalid_argument);
}

}  // namespace
}  // namespace clustersim::engine
