// cluster.network's pods (a fat tree of three levels): the keys reach the topology, and a pod key
// where there are no pods, or pods outside a fat tree, is an error naming file, line and key.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/topology_builders.hpp"
#include "models/scenario.hpp"
#include "tests/models/scenario_error_check.hpp"

namespace clustersim::models {
namespace {

// 48 DGX H100 nodes (384 GPUs, one NIC each) on 16-port leaves: 24 leaves; `network` is the
// network map's extra keys, on line 5.
std::string pods_scenario(const std::string& network) {
  return "name: pods\n"        // 1
         "cluster:\n"          // 2
         "  nodes: 48\n"       // 3
         "  node: dgx-h100\n"  // 4
         "  network: {nics_per_leaf: 16, spines: 2" +
         network +
         "}\n"                                                             // 5
         "model: llama2-7b\n"                                              // 6
         "training: {global_batch: 384, micro_batch: 1, seq_len: 4096}\n"  // 7
         "parallel: {tp: 8}\n";                                            // 8
}

TEST(ScenarioPods, TheKeysBuildCoreSwitchesAbovePodsOfLeaves) {
  const Scenario s = parse_scenario(
      pods_scenario(", leaves_per_pod: 8, pod_oversubscription: 7, cores: 4"), "pods.yaml");
  const auto& f = s.cluster.topology.fabric;
  EXPECT_EQ(f.leaves_per_pod, 8);
  EXPECT_EQ(f.pod_oversubscription, 7.0);
  EXPECT_EQ(f.cores, 4);
  // 384 ports / 16 = 24 leaves = 3 pods of 8, each with 2 spines: 6 spines under 4 cores.
  const engine::Topology t = engine::build_cluster_topology(s.cluster.topology);
  std::size_t spines = 0, cores = 0;
  for (engine::VertexId v = 0; v < t.num_vertices(); ++v) {
    spines += t.vertex(v).kind == engine::VertexKind::spine_switch ? 1 : 0;
    cores += t.vertex(v).kind == engine::VertexKind::core_switch ? 1 : 0;
  }
  EXPECT_EQ(spines, 6u);
  EXPECT_EQ(cores, 4u);
}

TEST(ScenarioPods, WithoutPodsThereAreNoCoreSwitches) {
  const Scenario s = parse_scenario(pods_scenario(""), "pods.yaml");
  EXPECT_EQ(s.cluster.topology.fabric.leaves_per_pod, 0);
  const engine::Topology t = engine::build_cluster_topology(s.cluster.topology);
  for (engine::VertexId v = 0; v < t.num_vertices(); ++v)
    EXPECT_NE(t.vertex(v).kind, engine::VertexKind::core_switch);
}

TEST(ScenarioPods, PodKeysWithoutPodsOrOutsideAFatTreeAreErrors) {
  // Line 5, column of the key's value: "  network: {nics_per_leaf: 16, spines: 2, " is 42
  // characters, so the next key starts at column 43 and its value after "key: ".
  expect_error(pods_scenario(", pod_oversubscription: 7"), "bad.yaml:5:65",
               "cluster.network.pod_oversubscription", "pods are not configured");
  expect_error(pods_scenario(", cores: 2"), "bad.yaml:5:50", "cluster.network.cores",
               "together with leaves_per_pod");
  expect_error(pods_scenario(", topology: rail-optimized, leaves_per_pod: 4"), "bad.yaml:5:85",
               "cluster.network.leaves_per_pod", "pods exist only in a fat tree");
  expect_error(pods_scenario(", leaves_per_pod: 0"), "bad.yaml:5:59",
               "cluster.network.leaves_per_pod", "allowed: integers from 1");
  expect_error(pods_scenario(", leaves_per_pod: 2, pod_oversubscription: 0.5"), "bad.yaml:5:84",
               "cluster.network.pod_oversubscription", "allowed: numbers >= 1");
}

TEST(ScenarioPods, SpineToCoreLinksAreBoundedLikeTheOtherFabricLinks) {
  // 96 nodes: 768 ports on 48 leaves, in pods of one: 48 pods · 2 spines · 65,536 cores =
  // 6,291,456 spine-core links, over the 4,194,304 the topology graph allows (docs/scenario.md
  // "Limits"); with 40,000 cores, 3,840,000 stay under it.
  const std::vector<std::string> nodes96 = {"cluster.nodes=96"};
  expect_error(pods_scenario(", leaves_per_pod: 1, cores: 65536"), "bad.yaml:5",
               "cluster.network.cores",
               "spine-to-core links (48 pods · 2 spines · 65536 cores) = 6291456 exceeds the "
               "limit of 4194304",
               nodes96);
  EXPECT_EQ(parse_scenario(pods_scenario(", leaves_per_pod: 1, cores: 40000"), "ok.yaml", nodes96)
                .cluster.topology.fabric.cores,
            40000);
}

}  // namespace
}  // namespace clustersim::models
