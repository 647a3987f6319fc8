// NCCL's channel count for a group with one GPU per node (the data-parallel groups of a plan with
// tensor parallelism 8): its search for one GPU (src/graph/search.cc), worked out by hand from
// the speed lists and ncclTopoDupChannels, and the ring's rate that follows.
#include <gtest/gtest.h>

#include <vector>

#include "engine/network/collectives.hpp"
#include "engine/network/nccl_tuning.hpp"
#include "engine/topology_builders.hpp"
#include "tests/engine/run_flow.hpp"

namespace clustersim::engine {
namespace {

// `nodes` nodes of 8 GPUs on NVSwitch, a NIC per GPU, one switch between the nodes.
ClusterTopologySpec nodes_of(int nodes, int arch, double pcie_gbps, double nic_gbps) {
  ClusterTopologySpec spec;
  spec.nodes = nodes;
  spec.node.gpus = 8;
  spec.node.nics = 8;
  spec.node.nvlink_bandwidth = Bandwidth::gigabytes_per_second(450);
  spec.node.pcie_bandwidth = Bandwidth::gigabytes_per_second(pcie_gbps);
  spec.node.nic_bandwidth = Bandwidth::gigabytes_per_second(nic_gbps);
  spec.node.gpu_arch = arch;
  spec.node.nvls = arch >= 90;
  spec.fabric.kind = FabricKind::single_switch;
  return spec;
}

// GPU 0 of every node.
std::vector<EndpointId> first_gpus(int nodes) {
  std::vector<EndpointId> m;
  for (int n = 0; n < nodes; ++n)
    m.push_back(static_cast<EndpointId>(8 * n));
  return m;
}

TEST(NcclChannelCount, OneGpuPerNodeDoublesItsChannelOnlyAtTwentyFiveGBpsOrMore) {
  struct Case {
    const char* what;
    int arch;
    double pcie, nic;
    int channels;
  };
  // The search's speed is the fastest entry of the generation's list at or below the GPU's path
  // to the network (PCIe link and NIC); one channel per NIC, doubled from 25 GB/s on.
  const Case cases[] = {
      // A100, PCIe gen 4 (NCCL: 24 GB/s) and 200 Gb/s: min(25, 25) -> 24 of {48, 30, 28, 24, ...}.
      {"A100 + 200 Gb/s", 80, 25, 25, 1},
      // A100 and a 400 Gb/s NIC: the PCIe link still bounds it at 25 -> 24.
      {"A100 + 400 Gb/s", 80, 25, 50, 1},
      // H100, PCIe gen 5 and 400 Gb/s: min(50, 50) -> 48 of {48, 45, 42, ...}: doubled.
      {"H100 + 400 Gb/s", 90, 50, 50, 2},
      // H100 on 200 Gb/s NICs: min(50, 25) -> 24: one channel.
      {"H100 + 200 Gb/s", 90, 50, 25, 1},
      // B200 on 800 Gb/s NICs: min(100, 100) -> 96 of {96, 86, 80, ...}: doubled.
      {"B200 + 800 Gb/s", 100, 100, 100, 2},
  };
  for (const Case& c : cases) {
    const Topology t = build_cluster_topology(nodes_of(4, c.arch, c.pcie, c.nic));
    EXPECT_EQ(collective_channels(first_gpus(4), t), c.channels) << c.what;
  }
}

TEST(NcclChannelCount, TwoH100sOnTwoNodesRingAtTwoChannelsNetworkRate) {
  // One H100 per node, 400 Gb/s NICs: 2 channels, each at most kNetChannelGBps = 20.6 GB/s over
  // the network, so an all-reduce's ring moves 2(n-1)/n·S = S at 41.2 GB/s (below the NIC's
  // 50 GB/s): 1 GiB in 2^30 / 41.2e9 s beyond its latency.
  const Topology t = build_cluster_topology(nodes_of(2, 90, 50, 50));
  const auto m = first_gpus(2);
  const TransferPlan p =
      plan_collective(CollectiveType::all_reduce, Algorithm::ring, m, 0, t, Protocol::simple);
  ASSERT_EQ(p.channels, 2);
  const double gib = 1024.0 * 1024 * 1024;
  const double latency = p.phases[0].latency_for(gib).seconds();
  EXPECT_NEAR(run_flow_once(t, p, gib) - latency, gib / (2 * nccl::kNetChannelGBps * 1e9), 1e-7);
}

}  // namespace
}  // namespace clustersim::engine
