// `nvidia-smi topo -m` to the scenario's node (issue 18): import-topo's conversion and a
// scenario's `node: {from_topo: FILE}` on matrices of five machine types (tests/data/topo/,
// README.md). Every expected figure is read off the matrix by hand: NV# x 25 GB/s per link and
// direction (NVLink 2-4), PCIe switch groups from PIX/PXB, CPUs from the affinity columns, NICs
// from the PIX/PXB NIC columns.
#include <gtest/gtest.h>

#include <algorithm>

#include "models/run_scenario.hpp"
#include "models/topo_node.hpp"

namespace clustersim::models {
namespace {

const std::string kTopoNodeDir = std::string(CLUSTERSIM_TEST_DATA) + "/topo/";
constexpr double kGB = 1e9;

TopoNode node_of(const std::string& file, const char* gpu = nullptr) {
  return node_from_topo(read_nvidia_smi_topo(kTopoNodeDir + file), gpu ? find_gpu(gpu) : nullptr);
}

bool mentions(const std::vector<std::string>& lines, const std::string& part) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& l) { return l.find(part) != std::string::npos; });
}

TEST(TopoNode, DgxA100) {
  const TopoNode n = node_of("dgx_a100.txt");
  EXPECT_EQ(n.gpus, 8);
  EXPECT_EQ(n.fabric, engine::IntraNodeFabric::nvswitch);
  EXPECT_DOUBLE_EQ(*n.nvlink_bandwidth, 300 * kGB);  // NV12: 12 x 25; NVIDIA's "600 GB/s" / 2
  EXPECT_EQ(*n.gpus_per_switch, 2);                  // NIC0, NIC1 are PXB to GPU0 and GPU1
  EXPECT_EQ(*n.cpus, 4);                             // NUMA 3, 1, 7, 5
  EXPECT_EQ(*n.nics, 8);
  ASSERT_EQ(n.nic_affinity.size(), 8u);
  EXPECT_EQ(n.nic_affinity[7].first, "GPU7");
  EXPECT_EQ(n.nic_affinity[7].second, (std::vector<std::string>{"NIC6 (mlx5_6)", "NIC7 (mlx5_7)"}));
  EXPECT_TRUE(mentions(n.not_inferred, "the GPU model"));
  EXPECT_TRUE(mentions(n.not_inferred, "NVLink generation"));
}

TEST(TopoNode, DgxH100WithStorageNics) {
  const TopoNode n = node_of("dgx_h100.txt", "H100-SXM5-80GB");
  EXPECT_EQ(n.fabric, engine::IntraNodeFabric::nvswitch);
  EXPECT_DOUBLE_EQ(*n.nvlink_bandwidth, 450 * kGB);  // NV18 x 25; NVIDIA's "900 GB/s" / 2
  EXPECT_EQ(*n.gpus_per_switch, 1);  // each GPU shares its switch tree with one NIC only
  EXPECT_EQ(*n.cpus, 2);             // NUMA 0 and 1
  // 12 NICs; NIC1, NIC2, NIC7, NIC8 are no GPU's PXB neighbour (storage): 8 compute NICs.
  EXPECT_EQ(*n.nics, 8);
  EXPECT_TRUE(mentions(n.inferred, "NIC1 (mlx5_1), NIC2 (mlx5_2), NIC7 (mlx5_7), NIC8 (mlx5_8)"));
  EXPECT_EQ(n.nic_affinity[1].second, std::vector<std::string>{"NIC3 (mlx5_3)"});
  EXPECT_FALSE(mentions(n.not_inferred, "the GPU model"));
  EXPECT_FALSE(mentions(n.not_inferred, "NVLink generation"));
}

TEST(TopoNode, HgxH200PastedWithSpacesAndAPrompt) {
  const TopoNode n = node_of("hgx_h200_pasted.txt", "H200-SXM-141GB");
  EXPECT_EQ(n.gpus, 8);
  EXPECT_EQ(n.fabric, engine::IntraNodeFabric::nvswitch);
  EXPECT_DOUBLE_EQ(*n.nvlink_bandwidth, 450 * kGB);
  EXPECT_EQ(*n.gpus_per_switch, 1);  // GPUi and NICi PIX, nothing else
  EXPECT_EQ(*n.cpus, 2);
  EXPECT_EQ(*n.nics, 8);
}

// AWS p5: 32 EFA devices, four PXB to each GPU: all 32 are counted, four rails a GPU, which the
// schema takes as one device each (docs/topology.md "Several NICs per GPU").
TEST(TopoNode, AwsP5FourEfaDevicesAGpuAreItsRails) {
  const TopoNode n = node_of("aws_p5.txt", "H100-SXM5-80GB");
  EXPECT_EQ(n.gpus, 8);
  EXPECT_EQ(*n.nics, 32);
  ASSERT_EQ(n.nic_affinity.size(), 8u);
  EXPECT_EQ(n.nic_affinity[1].second.size(), 4u);
  EXPECT_EQ(n.nic_affinity[1].second.front(), "NIC4 (rdmap143s0)");
  EXPECT_TRUE(mentions(n.inferred, "4 NICs per GPU")) << n.inferred.back();
  EXPECT_FALSE(mentions(n.not_inferred, "NICs for 8 GPUs"));
  // EFA devices (rdmap*): the plugin latency the matrix cannot show is said, not guessed.
  EXPECT_TRUE(mentions(n.not_inferred, "network.plugin_latency: the rdmap* NICs are AWS EFA"));
  EXPECT_FALSE(mentions(node_of("dgx_h100.txt", "H100-SXM5-80GB").not_inferred, "plugin_latency"));
}

TEST(TopoNode, B200NvlinkFiveDoublesEachLink) {
  // The same NV18 matrix on a B200 (NVLink 5, 50 GB/s per link and direction): 900 GB/s.
  const TopoNode n = node_of("hgx_h200_pasted.txt", "B200");
  EXPECT_DOUBLE_EQ(*n.nvlink_bandwidth, 900 * kGB);
}

TEST(TopoNode, PcieServerWithPixPxbSys) {
  const TopoNode n = node_of("pcie_pix_pxb_sys.txt");
  EXPECT_EQ(n.fabric, engine::IntraNodeFabric::pcie);
  EXPECT_FALSE(n.nvlink_bandwidth.has_value());
  EXPECT_FALSE(n.nvlink_bridges);
  EXPECT_EQ(*n.gpus_per_switch, 4);  // {0,1,2,3} PIX/PXB, {4,5,6,7} PIX/PXB, SYS between
  EXPECT_EQ(*n.cpus, 2);             // two CPU affinity ranges, no NUMA column
  EXPECT_FALSE(n.nics.has_value());
  EXPECT_TRUE(mentions(n.not_inferred, "no NIC rows"));
}

TEST(TopoNode, PcieBridgesNicsAndNumaColumns) {
  // A100-SXM4-80GB: NVLink 3, as on PCIe A100s.
  const TopoNode n = node_of("pcie_bridges_nics_numa.txt", "A100-SXM4-80GB");
  EXPECT_EQ(n.gpus, 4);
  EXPECT_EQ(n.fabric, engine::IntraNodeFabric::pcie);
  EXPECT_TRUE(n.nvlink_bridges);                     // NV12 between 0-1 and 2-3 exactly
  EXPECT_DOUBLE_EQ(*n.nvlink_bandwidth, 300 * kGB);  // three bridges, 12 links x 25
  EXPECT_EQ(*n.gpus_per_switch, 2);                  // NIC0 PIX to GPU0 and GPU1
  EXPECT_EQ(*n.cpus, 2);
  EXPECT_EQ(*n.nics, 2);  // eno1np0 is PHB/SYS: not under a GPU's switch
  EXPECT_TRUE(mentions(n.inferred, "NIC2 (eno1np0)"));
}

TEST(TopoNode, OneNvlinkPairCannotBeBridgesAndUnequalGroupsAreSaid) {
  // pcie_server.txt: NV4 between GPU0 and GPU1 only; PIX pairs 2-3, 4-5, 6-7.
  const TopoNode n = node_of("pcie_server.txt");
  EXPECT_EQ(n.fabric, engine::IntraNodeFabric::pcie);
  EXPECT_FALSE(n.nvlink_bridges);
  EXPECT_TRUE(mentions(n.not_inferred, "NVLink between GPU0-GPU1"));
  EXPECT_FALSE(n.gpus_per_switch.has_value());  // {0}, {1}, {2,3}, ...: unequal
  EXPECT_TRUE(mentions(n.not_inferred, "unequal size"));
}

// A scenario file beside the matrices, so from_topo's relative path resolves against it.
Scenario scenario_with(const std::string& cluster) {
  return parse_scenario("cluster: " + cluster + R"(
model: {layers: [{name: block, params: 1e6, forward_flops: 1e9, repeat: 2}]}
training: {global_batch: 16}
)",
                        kTopoNodeDir + "inline.yaml");
}

TEST(TopoNode, FromTopoInAScenario) {
  const Scenario s = scenario_with(
      "{nodes: 2, node: {from_topo: dgx_h100.txt}, gpu: H100-SXM5-80GB, network: {nic_bandwidth: "
      "400Gb/s}}");
  const auto& node = s.cluster.topology.node;
  EXPECT_EQ(node.gpus, 8);
  EXPECT_EQ(node.fabric, engine::IntraNodeFabric::nvswitch);
  EXPECT_DOUBLE_EQ(node.nvlink_bandwidth.bytes_per_second(), 450 * kGB);
  EXPECT_EQ(node.gpus_per_pcie_switch, 1);
  EXPECT_EQ(node.cpus, 2);
  EXPECT_EQ(node.nics, 8);
  EXPECT_DOUBLE_EQ(node.nic_bandwidth.bytes_per_second(), 50 * kGB);  // 400 Gb/s
  EXPECT_TRUE(node.nvls);                                             // Hopper on NVSwitch
  EXPECT_EQ(build_topology(s).num_gpus(), 16u);
  // Explicit keys override what the matrix says.
  const Scenario four = scenario_with(
      "{node: {from_topo: pcie_pix_pxb_sys.txt}, gpu: L40S, intra_node: {gpus_per_switch: 2}}");
  EXPECT_EQ(four.cluster.topology.node.gpus_per_pcie_switch, 2);
  EXPECT_EQ(four.cluster.topology.node.fabric, engine::IntraNodeFabric::pcie);
}

TEST(TopoNode, ImportTopoYamlLoadsAsTheSameNode) {
  for (const char* file : {"dgx_a100.txt", "dgx_h100.txt", "pcie_bridges_nics_numa.txt",
                           "pcie_pix_pxb_sys.txt", "aws_p5.txt"}) {
    const TopoImport imported = import_topo(kTopoNodeDir + file, "A100-SXM4-80GB");
    const Scenario from_yaml = parse_scenario(imported.yaml + R"(
model: {layers: [{name: block, params: 1e6, forward_flops: 1e9, repeat: 2}]}
training: {global_batch: 16}
)",
                                              "imported.yaml");
    const Scenario inline_topo =
        scenario_with(std::string("{node: {from_topo: ") + file + "}, gpu: A100-SXM4-80GB}");
    const auto& a = from_yaml.cluster.topology.node;
    const auto& b = inline_topo.cluster.topology.node;
    EXPECT_EQ(a.gpus, b.gpus) << file;
    EXPECT_EQ(a.fabric, b.fabric) << file;
    EXPECT_DOUBLE_EQ(a.nvlink_bandwidth.bytes_per_second(), b.nvlink_bandwidth.bytes_per_second())
        << file;
    EXPECT_EQ(a.nvlink_bridges, b.nvlink_bridges) << file;
    EXPECT_EQ(a.gpus_per_pcie_switch, b.gpus_per_pcie_switch) << file;
    EXPECT_EQ(a.cpus, b.cpus) << file;
    EXPECT_EQ(a.nics, b.nics) << file;
    EXPECT_NE(imported.yaml.find("# Not in the matrix:"), std::string::npos) << imported.yaml;
  }
}

std::string scenario_error(const std::string& cluster) {
  try {
    (void)scenario_with(cluster);
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "no error";
}

TEST(TopoNode, FromTopoErrorsNameFileLineAndKey) {
  // The matrix's own error, behind the scenario's location and key.
  const auto bad = scenario_error("{node: {from_topo: bad_cell.txt}, gpu: A100-SXM4-80GB}");
  EXPECT_NE(bad.find("inline.yaml:1:29: cluster.node.from_topo: "), std::string::npos) << bad;
  EXPECT_NE(bad.find("bad_cell.txt:4: unknown connection 'PCI'"), std::string::npos) << bad;
  const auto missing = scenario_error("{node: {from_topo: nope.txt}, gpu: A100-SXM4-80GB}");
  EXPECT_NE(missing.find("cluster.node.from_topo: file '"), std::string::npos) << missing;
  const auto no_gpu = scenario_error("{node: {from_topo: dgx_h100.txt}}");
  EXPECT_NE(no_gpu.find("cluster.gpu"), std::string::npos) << no_gpu;
  EXPECT_NE(no_gpu.find("does not print"), std::string::npos) << no_gpu;
  const auto typo = scenario_error("{node: {from_topology: dgx_h100.txt}, gpu: L40S}");
  EXPECT_NE(typo.find("from_topo"), std::string::npos) << typo;
}

}  // namespace
}  // namespace clustersim::models
