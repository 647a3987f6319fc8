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

namespace clustersim::models {
namespace {

// The host CPUs' maker reaches NCCL's tuner (docs/network.md): the dgx-a100 preset's EPYCs,
// dgx-h100's Xeons, and a scenario's cluster.intra_node.cpu_vendor over either.
TEST(ScenarioNodes, TheHostCpuVendorReachesTheCollectiveHardware) {
  const std::string head = R"(
model: {layers: [{name: block, params: 1e6, forward_flops: 1e9}]}
training: {global_batch: 16}
cluster: {nodes: 2, )";
  const auto amd = [&](const std::string& cluster) {
    return build_topology(parse_scenario(head + cluster + "}\n", "cpu.yaml"))
        .collective_hardware()
        .amd_cpu;
  };
  EXPECT_TRUE(amd("node: dgx-a100"));
  EXPECT_FALSE(amd("node: dgx-h100"));
  EXPECT_FALSE(amd("node: dgx-a100, intra_node: {cpu_vendor: intel}"));
  EXPECT_TRUE(amd("node: dgx-h100, intra_node: {cpu_vendor: amd}"));
  EXPECT_FALSE(amd("gpus_per_node: 8, gpu: A100-SXM4-80GB"));  // no preset: not AMD
  try {
    parse_scenario(head + "node: dgx-a100, intra_node: {cpu_vendor: arm}}\n", "bad.yaml");
    ADD_FAILURE() << "cpu_vendor: arm was accepted";
  } catch (const ScenarioError& e) {
    const std::string message = e.what();
    EXPECT_TRUE(message.starts_with("bad.yaml:4:")) << message;
    EXPECT_NE(message.find("cluster.intra_node.cpu_vendor"), std::string::npos) << message;
    EXPECT_NE(message.find("allowed: amd | intel | other"), std::string::npos) << message;
  }
}

// nics_per_node may be a multiple of gpus_per_node: each GPU's share are its rails, one device of
// their summed bandwidth (docs/topology.md "Several NICs per GPU"); a preset's rails stay per GPU
// when gpus_per_node changes; other counts above the GPUs are an error on the key.
TEST(ScenarioNodes, SeveralNicsPerGpuAreRailsOfOneDevice) {
  const std::string head = R"(
model: {layers: [{name: block, params: 1e6, forward_flops: 1e9}]}
training: {global_batch: 16}
cluster: {nodes: 2, )";
  const auto parse = [&](const std::string& cluster) {
    return parse_scenario(head + cluster + "}\n", "rails.yaml");
  };
  const Scenario stated =
      parse("node: dgx-h100, network: {nics_per_node: 32, nic_bandwidth: 100Gb/s}");
  EXPECT_EQ(stated.cluster.topology.node.nics, 32);
  EXPECT_EQ(engine::rails_per_nic_device(stated.cluster.topology.node), 4);
  EXPECT_EQ(build_topology(stated).num_gpus(), 16u);
  const Scenario half = parse("node: aws-p5, gpus_per_node: 4");
  EXPECT_EQ(half.cluster.topology.node.nics, 16);  // the preset's four a GPU
  const Scenario plugin = parse("node: dgx-h100, network: {plugin_latency: 35us}");
  EXPECT_NEAR(build_topology(plugin).collective_hardware().nic_latency_us, 35.0, 1e-9);
  try {
    parse("node: dgx-h100, network: {nics_per_node: 12}");
    ADD_FAILURE() << "12 NICs for 8 GPUs was accepted";
  } catch (const ScenarioError& e) {
    const std::string message = e.what();
    EXPECT_TRUE(message.starts_with("rails.yaml:4:")) << message;
    EXPECT_NE(message.find("cluster.network.nics_per_node"), std::string::npos) << message;
    EXPECT_NE(message.find("or a multiple of gpus_per_node"), std::string::npos) << message;
  }
  // A fat tree keeps a GPU's rails on one leaf: a smaller leaf is an error on its key.
  try {
    parse("node: aws-p5, network: {topology: fat-tree, nics_per_leaf: 2}");
    ADD_FAILURE() << "2 ports a leaf for 4 rails a GPU was accepted";
  } catch (const ScenarioError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("cluster.network.nics_per_leaf"), std::string::npos) << message;
    EXPECT_NE(message.find("allowed: nics_per_leaf >= 4"), std::string::npos) << message;
  }
  EXPECT_NO_THROW(parse("node: aws-p5, network: {topology: fat-tree, nics_per_leaf: 4}"));
}

}  // namespace
}  // namespace clustersim::models
