// `nvidia-smi topo -m` parsing on matrices written after DGX A100 and PCIe servers
// (tests/data/topo/).
#include <gtest/gtest.h>

#include <sstream>

#include "models/nvidia_smi_topo.hpp"

namespace clustersim::models {
namespace {

const std::string kSmiTopoDir = std::string(CLUSTERSIM_TEST_DATA) + "/topo/";

const TopoPair& pair(const TopoDescription& d, const std::string& a, const std::string& b) {
  for (const auto& p : d.gpu_pairs)
    if (p.a == a && p.b == b) return p;
  throw std::runtime_error("no pair " + a + "-" + b);
}

TEST(NvidiaSmiTopo, DgxA100IsAnNvswitchNode) {
  const auto d = read_nvidia_smi_topo(kSmiTopoDir + "dgx_a100.txt");
  ASSERT_EQ(d.gpus.size(), 8u);
  ASSERT_EQ(d.nics.size(), 8u);
  EXPECT_EQ(d.gpu_pairs.size(), 28u);      // 8·7/2
  EXPECT_EQ(d.gpu_nic_pairs.size(), 64u);  // 8 GPUs × 8 NICs
  for (const auto& p : d.gpu_pairs) {
    EXPECT_EQ(p.link, TopoLink::nvlink);
    EXPECT_EQ(p.nvlinks, 12);  // A100: 12 NVLink3 links to the NVSwitches
  }
  EXPECT_EQ(d.recommended_fabric(), "nvswitch");
  EXPECT_TRUE(d.pcie_only_pairs().empty());
  EXPECT_EQ(d.nics[3].nic_device, "mlx5_3");  // from the NIC legend
  EXPECT_EQ(d.gpus[0].cpu_affinity, "48-63,176-191");
  EXPECT_EQ(d.gpus[0].numa_affinity, "3");
  // GPU0 and GPU1 share a PCIe switch with NIC0 and NIC1 (PXB).
  EXPECT_EQ(d.nearest_nics("GPU0"), (std::vector<std::string>{"NIC0", "NIC1"}));
  EXPECT_EQ(d.nearest_nics("GPU7"), (std::vector<std::string>{"NIC6", "NIC7"}));
}

TEST(NvidiaSmiTopo, PcieServerFlagsPcieOnlyPairs) {
  const auto d = read_nvidia_smi_topo(kSmiTopoDir + "pcie_server.txt");
  ASSERT_EQ(d.gpus.size(), 8u);
  EXPECT_TRUE(d.nics.empty());
  EXPECT_EQ(d.recommended_fabric(), "pcie");
  // One NVLink bridge (GPU0-GPU1, NV4): the other 27 of the 28 pairs go over PCIe.
  EXPECT_EQ(d.pcie_only_pairs().size(), 27u);
  EXPECT_EQ(pair(d, "GPU0", "GPU1").link, TopoLink::nvlink);
  EXPECT_EQ(pair(d, "GPU0", "GPU1").nvlinks, 4);
  EXPECT_EQ(pair(d, "GPU2", "GPU3").link, TopoLink::pix);
  EXPECT_EQ(pair(d, "GPU0", "GPU2").link, TopoLink::node);
  EXPECT_EQ(pair(d, "GPU3", "GPU4").link, TopoLink::sys);
  EXPECT_EQ(d.gpus[5].cpu_affinity, "32-63");
}

TEST(NvidiaSmiTopo, OldStyleNicColumns) {
  const auto d = read_nvidia_smi_topo(kSmiTopoDir + "pcie_with_nics.txt");
  ASSERT_EQ(d.gpus.size(), 4u);
  ASSERT_EQ(d.nics.size(), 2u);
  EXPECT_EQ(d.nics[1].nic_device, "mlx5_1");
  EXPECT_EQ(pair(d, "GPU0", "GPU1").link, TopoLink::pxb);
  EXPECT_EQ(d.nearest_nics("GPU2"), std::vector<std::string>{"mlx5_1"});
  EXPECT_EQ(d.recommended_fabric(), "pcie");
  EXPECT_EQ(d.pcie_only_pairs().size(), 6u);
}

TEST(NvidiaSmiTopo, PastedWithSpacesAPromptAndTrailingText) {
  // Tabs turned into spaces, "CPU Affinity" and "NUMA Affinity" rejoined; the prompt above the
  // header and the one after the NIC legend are not the matrix.
  const auto d = read_nvidia_smi_topo(kSmiTopoDir + "hgx_h200_pasted.txt");
  ASSERT_EQ(d.gpus.size(), 8u);
  ASSERT_EQ(d.nics.size(), 8u);
  EXPECT_EQ(pair(d, "GPU3", "GPU6").nvlinks, 18);
  EXPECT_EQ(d.gpus[5].cpu_affinity, "56-111,168-223");
  EXPECT_EQ(d.gpus[5].numa_affinity, "1");
  EXPECT_EQ(d.nics[2].nic_device, "mlx5_2");
  EXPECT_EQ(d.nearest_nics("GPU2"), std::vector<std::string>{"NIC2"});
  std::istringstream trailing("\tGPU0\tGPU1\nGPU0\t X \tPIX\nGPU1\tPIX\t X \n$ exit\n");
  EXPECT_EQ(parse_nvidia_smi_topo(trailing, "t.txt").gpu_pairs.size(), 1u);
}

TEST(NvidiaSmiTopo, GpuNumaIdColumnAndTwelveNics) {
  const auto d = read_nvidia_smi_topo(kSmiTopoDir + "dgx_h100.txt");
  ASSERT_EQ(d.gpus.size(), 8u);
  ASSERT_EQ(d.nics.size(), 12u);
  EXPECT_EQ(d.gpus[0].numa_affinity, "0");  // not the "GPU NUMA ID" column after it
  EXPECT_EQ(d.nics[11].nic_device, "mlx5_11");
}

std::string error_of(const std::string& file) {
  try {
    (void)read_nvidia_smi_topo(kSmiTopoDir + file);
  } catch (const TopoParseError& e) {
    return e.what();
  }
  return "no error";
}

TEST(NvidiaSmiTopo, ErrorsNameFileLineAndWhatIsAllowed) {
  EXPECT_NE(error_of("not_topo.txt").find("not_topo.txt:1: not `nvidia-smi topo -m` output"),
            std::string::npos);
  const auto bad = error_of("bad_cell.txt");
  EXPECT_NE(bad.find("bad_cell.txt:4: unknown connection 'PCI' between GPU2 and GPU3 (allowed: X, "
                     "NV#, PIX, PXB, PHB, NODE, SYS)"),
            std::string::npos)
      << bad;
  std::istringstream asym("\tGPU0\tGPU1\nGPU0\t X \tNV4\nGPU1\tNV8\t X \n");
  EXPECT_THROW((void)parse_nvidia_smi_topo(asym, "m.txt"), TopoParseError);
  std::istringstream unknown("\tGPU0\tGPU1\nGPU0\t X \tNV4\nGPU1\tNV4\t X \nGPU8\tNV4\tNV4\n");
  try {
    (void)parse_nvidia_smi_topo(unknown, "u.txt");
    ADD_FAILURE();
  } catch (const TopoParseError& e) {
    EXPECT_NE(std::string(e.what()).find("u.txt:4: row 'GPU8' names no column"), std::string::npos)
        << e.what();
  }
  std::istringstream missing_row("\tGPU0\tGPU1\nGPU0\t X \tNV4\n");
  EXPECT_THROW((void)parse_nvidia_smi_topo(missing_row, "m.txt"), TopoParseError);
}

}  // namespace
}  // namespace clustersim::models
