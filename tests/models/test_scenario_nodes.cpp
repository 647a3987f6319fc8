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

namespace clustersim::models {
namespace {

// simulation.link_efficiency derates each link kind: by default NVLink carries 80 % of its
// nominal figure (NCCL's bus bandwidth on A100: ≈ 235 of 300 GB/s) and InfiniBand 95 %.
TEST(ScenarioNodes, LinkEfficiencyDeratesEachKind) {
  const std::string text = R"(
cluster: {nodes: 2, node: dgx-a100}
model: {layers: [{name: block, params: 1e6, forward_flops: 1e9}]}
training: {global_batch: 16}
)";
  const auto topology = build_topology(parse_scenario(text, "eff.yaml"));
  // n0.gpu0 -> n0.gpu1 crosses the NVSwitch: 0.8 × 300 GB/s.
  EXPECT_DOUBLE_EQ(topology.route_bandwidth(0, 1).bytes_per_second(), 0.8 * 300e9);
  // n0.gpu0 -> n1.gpu0 is bounded by the 200 Gb/s NIC: 0.95 × 25 GB/s.
  EXPECT_DOUBLE_EQ(topology.route_bandwidth(0, 8).bytes_per_second(), 0.95 * 25e9);
  const auto nominal = build_topology(
      parse_scenario(text + "simulation: {link_efficiency: {nvlink: 1, ib: 1}}\n", "nominal.yaml"));
  EXPECT_DOUBLE_EQ(nominal.route_bandwidth(0, 1).bytes_per_second(), 300e9);
  EXPECT_THROW(parse_scenario(text + "simulation: {link_efficiency: {nvlink: 1.5}}\n", "bad.yaml"),
               ScenarioError);
}

}  // namespace
}  // namespace clustersim::models
