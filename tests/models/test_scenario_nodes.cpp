// Explicit nodes of unusual sizes get a topology that can be built.
#include <gtest/gtest.h>

#include "models/run_scenario.hpp"

namespace clustersim::models {
namespace {

TEST(ScenarioNodes, OneGpuNodesGetOneSwitchPerGpuUnlessStated) {
  // The default of two GPUs per PCIe switch cannot divide a one-GPU node.
  const Scenario sc = parse_scenario(R"(
cluster: {nodes: 2, gpus_per_node: 1, gpu: A100-SXM4-80GB}
model: {layers: [{name: block, params: 1e6, forward_flops: 1e9, repeat: 2}]}
training: {global_batch: 2}
)",
                                     "one-gpu.yaml");
  EXPECT_EQ(sc.cluster.topology.node.gpus_per_pcie_switch, 1);
  EXPECT_EQ(build_topology(sc).num_gpus(), 2u);
  // Stated explicitly, a value that does not divide stays an error (the topology says which).
  const Scenario bad = parse_scenario(R"(
cluster: {nodes: 1, gpus_per_node: 3, gpu: A100-SXM4-80GB, intra_node: {fabric: pcie, gpus_per_switch: 2}}
model: {layers: [{name: block, params: 1e6, forward_flops: 1e9}]}
training: {global_batch: 3}
)",
                                      "three.yaml");
  EXPECT_THROW(build_topology(bad), ScenarioError);
}

}  // namespace
}  // namespace clustersim::models
