// Shared by the topology tests: a route's vertex names, vertex counts by kind, and the small
// NVSwitch nodes the fat-tree tests hang under their leaves.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/topology.hpp"
#include "engine/topology_builders.hpp"

namespace clustersim::engine::test {

// Vertex names along the route, source GPU first; also checks the links form a chain.
inline std::vector<std::string> path(const Topology& t, EndpointId a, EndpointId b) {
  std::vector<std::string> names{t.vertex(t.gpu_vertex(a)).name};
  VertexId at = t.gpu_vertex(a);
  for (LinkId l : t.route(a, b)) {
    EXPECT_EQ(t.link(l).src, at) << "route links must form a chain";
    at = t.link(l).dst;
    names.push_back(t.vertex(at).name);
  }
  EXPECT_EQ(at, t.gpu_vertex(b));
  return names;
}

inline std::size_t count_kind(const Topology& t, VertexKind k) {
  std::size_t n = 0;
  for (VertexId v = 0; v < t.num_vertices(); ++v)
    n += t.vertex(v).kind == k ? 1 : 0;
  return n;
}

// `nodes` small NVSwitch nodes (2 GPUs, 1 PCIe switch of 32 GB/s and 0.4 us, 1 CPU, 2 NICs of
// 25 GB/s) on a fat tree of 4-port leaves: leaf l holds nodes 2l and 2l + 1. Fabric links 1 us;
// spines and oversubscription as the caller sets them.
inline ClusterTopologySpec small_nodes_on_leaves_of_four(int nodes) {
  ClusterTopologySpec s;
  s.nodes = nodes;
  s.node.fabric = IntraNodeFabric::nvswitch;
  s.node.gpus = 2;
  s.node.gpus_per_pcie_switch = 2;
  s.node.cpus = 1;
  s.node.nics = 2;
  s.node.pcie_bandwidth = Bandwidth::gigabytes_per_second(32);
  s.node.pcie_latency = Time::from_ps(400'000);
  s.node.nic_bandwidth = Bandwidth::gigabits_per_second(200);  // 25 GB/s
  s.fabric.kind = FabricKind::fat_tree;
  s.fabric.nics_per_leaf = 4;
  s.fabric.latency = Time::from_ps(1'000'000);
  return s;
}

}  // namespace clustersim::engine::test
