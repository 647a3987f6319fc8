// GPU, node and model preset lookups, checked against the vendors' datasheet figures and the
// published shapes (docs/presets.md lists the sources).
#include <gtest/gtest.h>

#include <algorithm>

#include "models/hardware.hpp"
#include "models/model_spec.hpp"

namespace clustersim::models {
namespace {

constexpr double T = 1e12;
constexpr double GiB = 1024.0 * 1024 * 1024;

double peak(const GpuSpec& g, Precision p) {
  return g.peak_flops[static_cast<int>(p)];
}

const GpuSpec& gpu(const char* name) {
  const GpuSpec* g = find_gpu(name);
  if (g == nullptr) throw std::runtime_error(std::string("no GPU preset ") + name);
  return *g;
}

TEST(Precision, NamesRoundTripAndSizes) {
  for (const char* n : {"fp32", "tf32", "fp16", "bf16", "fp8"}) {
    auto p = parse_precision(n);
    ASSERT_TRUE(p.has_value()) << n;
    EXPECT_EQ(to_string(*p), n);
  }
  EXPECT_FALSE(parse_precision("FP16").has_value());  // case-sensitive
  EXPECT_FALSE(parse_precision("int8").has_value());
  // IEEE fp32 and TF32 (stored as fp32) 4 bytes, half formats 2, fp8 (E4M3/E5M2) 1.
  EXPECT_EQ(bytes_per_element(Precision::fp32), 4);
  EXPECT_EQ(bytes_per_element(Precision::tf32), 4);
  EXPECT_EQ(bytes_per_element(Precision::fp16), 2);
  EXPECT_EQ(bytes_per_element(Precision::bf16), 2);
  EXPECT_EQ(bytes_per_element(Precision::fp8), 1);
}

TEST(GpuPresets, NamesAreTheDesignedSetSortedAndLookupIsExact) {
  const std::vector<std::string> expected = {
      "A100-SXM4-40GB", "A100-SXM4-80GB", "B200",           "H100-SXM5-80GB",
      "H200-SXM-141GB", "L40S",           "V100-SXM2-32GB", "cpu"};
  EXPECT_EQ(gpu_names(), expected);
  for (const auto& n : expected) {
    ASSERT_NE(find_gpu(n), nullptr) << n;
    EXPECT_EQ(find_gpu(n)->name, n);
  }
  EXPECT_EQ(find_gpu("a100-sxm4-80gb"), nullptr);
  EXPECT_EQ(find_gpu("A100"), nullptr);
  EXPECT_EQ(find_gpu(""), nullptr);
}

// NVIDIA V100 datasheet (SXM2): 15.7 TFLOP/s fp32, 125 tensor fp16, 900 GB/s, 32 GB HBM2.
TEST(GpuPresets, V100MatchesDatasheet) {
  const GpuSpec& g = gpu("V100-SXM2-32GB");
  EXPECT_DOUBLE_EQ(peak(g, Precision::fp32), 15.7 * T);
  EXPECT_DOUBLE_EQ(peak(g, Precision::fp16), 125 * T);
  EXPECT_EQ(peak(g, Precision::bf16), 0.0);  // Volta has no bf16, tf32 or fp8
  EXPECT_EQ(peak(g, Precision::tf32), 0.0);
  EXPECT_EQ(peak(g, Precision::fp8), 0.0);
  EXPECT_DOUBLE_EQ(g.hbm_bandwidth, 900e9);
  EXPECT_DOUBLE_EQ(g.memory_bytes, 32 * GiB);
}

// NVIDIA A100 datasheet: 19.5 fp32, 156 tf32, 312 fp16/bf16 dense; 1,555 GB/s (40GB),
// 2,039 GB/s (80GB SXM); nvidia-smi reports 40960 / 81920 MiB.
TEST(GpuPresets, A100MatchesDatasheet) {
  for (const char* name : {"A100-SXM4-40GB", "A100-SXM4-80GB"}) {
    const GpuSpec& g = gpu(name);
    EXPECT_DOUBLE_EQ(peak(g, Precision::fp32), 19.5 * T) << name;
    EXPECT_DOUBLE_EQ(peak(g, Precision::tf32), 156 * T) << name;
    EXPECT_DOUBLE_EQ(peak(g, Precision::fp16), 312 * T) << name;
    EXPECT_DOUBLE_EQ(peak(g, Precision::bf16), 312 * T) << name;
    EXPECT_EQ(peak(g, Precision::fp8), 0.0) << name;
  }
  EXPECT_DOUBLE_EQ(gpu("A100-SXM4-40GB").hbm_bandwidth, 1555e9);
  EXPECT_DOUBLE_EQ(gpu("A100-SXM4-80GB").hbm_bandwidth, 2039e9);
  EXPECT_DOUBLE_EQ(gpu("A100-SXM4-40GB").memory_bytes, 40960.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(gpu("A100-SXM4-80GB").memory_bytes, 81920.0 * 1024 * 1024);
}

// NVIDIA H100 / H200 datasheets (SXM): sparse 1,979 bf16, 3,958 fp8, 989 tf32 halved for dense;
// 67 fp32; 3.35 TB/s (H100) and 4.8 TB/s (H200); 80 GB and 141 GB.
TEST(GpuPresets, HopperMatchesDatasheets) {
  for (const char* name : {"H100-SXM5-80GB", "H200-SXM-141GB"}) {
    const GpuSpec& g = gpu(name);
    EXPECT_DOUBLE_EQ(peak(g, Precision::fp32), 67 * T) << name;
    EXPECT_DOUBLE_EQ(peak(g, Precision::tf32), 494.5 * T) << name;
    EXPECT_DOUBLE_EQ(peak(g, Precision::fp16), 989 * T) << name;
    EXPECT_DOUBLE_EQ(peak(g, Precision::bf16), 989 * T) << name;
    EXPECT_DOUBLE_EQ(peak(g, Precision::fp8), 1979 * T) << name;
  }
  EXPECT_DOUBLE_EQ(gpu("H100-SXM5-80GB").hbm_bandwidth, 3.35e12);
  EXPECT_DOUBLE_EQ(gpu("H200-SXM-141GB").hbm_bandwidth, 4.8e12);
  EXPECT_DOUBLE_EQ(gpu("H100-SXM5-80GB").memory_bytes, 80 * GiB);
  EXPECT_DOUBLE_EQ(gpu("H200-SXM-141GB").memory_bytes, 141 * GiB);
}

// NVIDIA HGX B200 datasheet, 8-GPU board: 36 PFLOPS fp16/bf16 and 72 PFLOPS fp8 with sparsity,
// 18 PFLOPS tf32 sparse, 600 TFLOPS fp32, 1.44 TB HBM3e, 64 TB/s. Per GPU, dense: /8, /2.
TEST(GpuPresets, B200MatchesHgxDatasheet) {
  const GpuSpec& g = gpu("B200");
  EXPECT_DOUBLE_EQ(peak(g, Precision::bf16), 36e15 / 8 / 2);
  EXPECT_DOUBLE_EQ(peak(g, Precision::fp16), 36e15 / 8 / 2);
  EXPECT_DOUBLE_EQ(peak(g, Precision::fp8), 72e15 / 8 / 2);
  EXPECT_DOUBLE_EQ(peak(g, Precision::tf32), 18e15 / 8 / 2);
  EXPECT_DOUBLE_EQ(peak(g, Precision::fp32), 600e12 / 8);
  EXPECT_DOUBLE_EQ(g.hbm_bandwidth, 64e12 / 8);
  EXPECT_DOUBLE_EQ(g.memory_bytes, 1440.0 / 8 * GiB);
}

// NVIDIA L40S datasheet: 91.6 fp32, 183 tf32, 362.05 fp16/bf16, 733 fp8 (dense), 864 GB/s,
// 48 GB GDDR6.
TEST(GpuPresets, L40sMatchesDatasheet) {
  const GpuSpec& g = gpu("L40S");
  EXPECT_DOUBLE_EQ(peak(g, Precision::fp32), 91.6 * T);
  EXPECT_DOUBLE_EQ(peak(g, Precision::tf32), 183 * T);
  EXPECT_DOUBLE_EQ(peak(g, Precision::bf16), 362.05 * T);
  EXPECT_DOUBLE_EQ(peak(g, Precision::fp16), 362.05 * T);
  EXPECT_DOUBLE_EQ(peak(g, Precision::fp8), 733 * T);
  EXPECT_DOUBLE_EQ(g.hbm_bandwidth, 864e9);
  EXPECT_DOUBLE_EQ(g.memory_bytes, 48 * GiB);
}

// The host pool: 32 cores × 2 AVX-512 FMA units × 16 fp32 lanes × 2 FLOP × 2.0 GHz; 8 channels
// of DDR5-4800 at 8 bytes per transfer.
TEST(GpuPresets, CpuPoolFollowsItsStatedAssumption) {
  const GpuSpec& g = gpu("cpu");
  EXPECT_DOUBLE_EQ(peak(g, Precision::fp32), 32.0 * 2 * 16 * 2 * 2.0e9);
  EXPECT_DOUBLE_EQ(peak(g, Precision::bf16), 2 * 32.0 * 2 * 16 * 2 * 2.0e9);
  EXPECT_DOUBLE_EQ(g.hbm_bandwidth, 8 * 4800e6 * 8);
}

TEST(GpuPresets, EfficienciesAreFractionsAndOverheadsSmall) {
  for (const auto& n : gpu_names()) {
    const GpuSpec& g = gpu(n.c_str());
    EXPECT_GT(g.compute_efficiency, 0.0) << n;
    EXPECT_LE(g.compute_efficiency, 1.0) << n;
    EXPECT_GT(g.memory_efficiency, 0.0) << n;
    EXPECT_LE(g.memory_efficiency, 1.0) << n;
    EXPECT_GT(g.launch_overhead_s, 0.0) << n;
    EXPECT_LT(g.launch_overhead_s, 1e-4) << n;
  }
}

TEST(NodePresets, NamesSortedAndEachNamesAGpuPreset) {
  const std::vector<std::string> expected = {
      "aws-p4de", "aws-p5", "dgx-a100", "dgx-b200", "dgx-h100", "hgx-h200", "pcie-4gpu-workstation",
      "pcie-8gpu"};
  EXPECT_EQ(node_names(), expected);
  for (const auto& n : expected) {
    const NodeSpec* node = find_node(n);
    ASSERT_NE(node, nullptr) << n;
    EXPECT_EQ(node->name, n);
    EXPECT_NE(find_gpu(node->gpu), nullptr) << n << " names " << node->gpu;
  }
  EXPECT_EQ(find_node("DGX-A100"), nullptr);
  EXPECT_EQ(find_node("dgx"), nullptr);
}

// DGX A100 / H100 user guides: NVLink 600 / 900 GB/s bidirectional per GPU, i.e. 300 / 450 GB/s
// each way; 8 compute NICs of 200 Gb/s HDR / 400 Gb/s NDR; PCIe Gen4 / Gen5 x16 effective
// 25 / 50 GB/s per direction (raw 31.5 / 63 GB/s less ~20 % protocol overhead).
TEST(NodePresets, DgxFiguresPerDirection) {
  using engine::IntraNodeFabric;
  const auto& a = find_node("dgx-a100")->topology;
  EXPECT_EQ(find_node("dgx-a100")->gpu, "A100-SXM4-80GB");
  EXPECT_EQ(a.fabric, IntraNodeFabric::nvswitch);
  EXPECT_EQ(a.gpus, 8);
  EXPECT_DOUBLE_EQ(a.nvlink_bandwidth.bytes_per_second(), 600e9 / 2);
  EXPECT_DOUBLE_EQ(a.pcie_bandwidth.bytes_per_second(), 25e9);
  EXPECT_EQ(a.gpus_per_pcie_switch, 2);
  EXPECT_EQ(a.cpus, 2);
  EXPECT_EQ(a.nics, 8);
  EXPECT_DOUBLE_EQ(a.nic_bandwidth.bytes_per_second(), 200e9 / 8);

  for (const char* name : {"dgx-h100", "hgx-h200"}) {
    const auto& h = find_node(name)->topology;
    EXPECT_EQ(h.fabric, IntraNodeFabric::nvswitch) << name;
    EXPECT_EQ(h.gpus, 8) << name;
    EXPECT_DOUBLE_EQ(h.nvlink_bandwidth.bytes_per_second(), 900e9 / 2) << name;
    EXPECT_DOUBLE_EQ(h.pcie_bandwidth.bytes_per_second(), 2 * 25e9) << name;
    EXPECT_EQ(h.nics, 8) << name;
    EXPECT_DOUBLE_EQ(h.nic_bandwidth.bytes_per_second(), 400e9 / 8) << name;
  }
  EXPECT_EQ(find_node("dgx-h100")->gpu, "H100-SXM5-80GB");
  EXPECT_EQ(find_node("hgx-h200")->gpu, "H200-SXM-141GB");

  // DGX B200 user guide: NVLink 5 at 1.8 TB/s bidirectional a GPU (2 NVSwitch chips, 14.4 TB/s
  // aggregate over 8 GPUs), 8 ConnectX-7 at 400 Gb/s, Xeon 8570 hosts with PCIe Gen5; 2 TB in 32
  // DIMMs over 2 × 8 channels at DDR5-4400: 2 · 8 · 4400e6 · 8 B = 563.2 GB/s.
  const NodeSpec& b = *find_node("dgx-b200");
  EXPECT_EQ(b.gpu, "B200");
  EXPECT_EQ(b.topology.gpus, 8);
  EXPECT_DOUBLE_EQ(b.topology.nvlink_bandwidth.bytes_per_second(), 14.4e12 / 8 / 2);
  EXPECT_DOUBLE_EQ(b.topology.pcie_bandwidth.bytes_per_second(), 2 * 25e9);
  EXPECT_EQ(b.topology.nics, 8);
  EXPECT_DOUBLE_EQ(b.topology.nic_bandwidth.bytes_per_second(), 400e9 / 8);
  EXPECT_FALSE(b.topology.amd_cpu);
  EXPECT_DOUBLE_EQ(b.host.memory_bytes, 2048.0 * (1u << 30));
  EXPECT_DOUBLE_EQ(b.host.memory_bandwidth, 563.2e9);
}

// AWS's instance pages: p5.48xlarge, 8 × H100, 3,200 Gb/s of EFA as 32 interfaces of 100 Gb/s
// (four a GPU: user guide "EFA configuration for P5"), 3rd-generation AMD EPYC, 2 TiB;
// p4de.24xlarge, 8 × A100 80 GB, 400 Gb/s as 4 interfaces (fewer than the GPUs: shared on the
// PCIe switches), Intel Xeon 8275CL, 1,152 GiB. aws-ofi-nccl's platform table
// (src/platform-aws.cpp) reports 75 µs of latency to NCCL on both.
TEST(NodePresets, AwsNodesStateTheirEfaAndThePluginsLatency) {
  struct Expected {
    const char* name;
    const char* gpu;
    int nics, devices, rails;
    double node_bits_per_s, nvlink_bytes_per_s, host_bytes;
    bool amd;
  };
  constexpr double kGiB = 1024.0 * 1024 * 1024;
  for (const Expected& e :
       {Expected{"aws-p5", "H100-SXM5-80GB", 32, 8, 4, 3200e9, 450e9, 2048 * kGiB, true},
        Expected{"aws-p4de", "A100-SXM4-80GB", 4, 4, 1, 400e9, 300e9, 1152 * kGiB, false}}) {
    const NodeSpec* node = find_node(e.name);
    ASSERT_NE(node, nullptr) << e.name;
    EXPECT_EQ(node->gpu, e.gpu) << e.name;
    const auto& t = node->topology;
    EXPECT_EQ(t.gpus, 8) << e.name;
    EXPECT_EQ(t.nics, e.nics) << e.name;
    EXPECT_EQ(engine::nic_devices(t), e.devices) << e.name;
    EXPECT_EQ(engine::rails_per_nic_device(t), e.rails) << e.name;
    EXPECT_DOUBLE_EQ(t.nic_bandwidth.bytes_per_second() * t.nics * 8, e.node_bits_per_s) << e.name;
    EXPECT_DOUBLE_EQ(t.nvlink_bandwidth.bytes_per_second(), e.nvlink_bytes_per_s) << e.name;
    EXPECT_DOUBLE_EQ(node->host.memory_bytes, e.host_bytes) << e.name;
    EXPECT_EQ(t.amd_cpu, e.amd) << e.name;
    EXPECT_DOUBLE_EQ(t.nic_plugin_latency.seconds(), 75e-6) << e.name;
  }
}

TEST(NodePresets, PcieNodes) {
  using engine::IntraNodeFabric;
  const auto& p8 = find_node("pcie-8gpu")->topology;
  EXPECT_EQ(p8.fabric, IntraNodeFabric::pcie);
  EXPECT_EQ(p8.gpus, 8);
  EXPECT_FALSE(p8.nvlink_bridges);
  EXPECT_EQ(p8.gpus_per_pcie_switch, 2);  // 4 switches
  EXPECT_EQ(p8.cpus, 2);
  EXPECT_EQ(p8.nics, 2);
  EXPECT_DOUBLE_EQ(p8.pcie_bandwidth.bytes_per_second(), 25e9);

  const auto& ws = find_node("pcie-4gpu-workstation")->topology;
  EXPECT_EQ(ws.fabric, IntraNodeFabric::pcie);
  EXPECT_EQ(ws.gpus, 4);
  EXPECT_FALSE(ws.nvlink_bridges);
  EXPECT_EQ(ws.gpus_per_pcie_switch, 0);  // straight onto the root complex
  EXPECT_EQ(ws.cpus, 1);
  EXPECT_EQ(ws.nics, 1);
  EXPECT_DOUBLE_EQ(ws.pcie_bandwidth.bytes_per_second(), 25e9);
}

TEST(ModelPresets, NamesSortedAndLookupExact) {
  std::vector<std::string> expected = {
      "bert-large", "deepseek-moe-16b", "deepseek-v2",  "deepseek-v2-lite", "deepseek-v3",
      "gpt2-xl",    "gpt3-175b",        "llama2-70b",   "llama2-7b",        "llama3-405b",
      "llama3-70b", "llama3-8b",        "mixtral-8x7b", "resnet50"};
  EXPECT_EQ(model_names(), expected);
  for (const auto& n : expected)
    ASSERT_NE(find_model(n), nullptr) << n;
  EXPECT_EQ(find_model("Llama3-8b"), nullptr);
  EXPECT_EQ(find_model("gpt3"), nullptr);
}

const TransformerSpec& transformer(const char* name) {
  return std::get<TransformerSpec>(find_model(name)->body);
}

// Published shapes: GPT-3 Table 2.1; HF configs for the rest.
TEST(ModelPresets, PublishedShapes) {
  const auto& g3 = transformer("gpt3-175b");
  EXPECT_EQ(g3.num_layers, 96);
  EXPECT_EQ(g3.hidden_size, 12288);
  EXPECT_EQ(g3.num_heads, 96);
  EXPECT_EQ(g3.ffn_hidden_size, 4 * 12288);
  EXPECT_EQ(g3.vocab_size, 51200);
  EXPECT_EQ(find_model("gpt3-175b")->default_seq_len, 2048);

  const auto& l2 = transformer("llama2-7b");
  EXPECT_EQ(l2.num_kv_heads, 32);
  EXPECT_EQ(l2.ffn_hidden_size, 11008);
  EXPECT_EQ(l2.activation, Activation::swiglu);
  EXPECT_EQ(l2.norm, Norm::rmsnorm);
  EXPECT_FALSE(l2.bias);
  EXPECT_FALSE(l2.learned_positions);

  const auto& l405 = transformer("llama3-405b");
  EXPECT_EQ(l405.num_layers, 126);
  EXPECT_EQ(l405.hidden_size, 16384);
  EXPECT_EQ(l405.num_heads, 128);
  EXPECT_EQ(l405.num_kv_heads, 8);
  EXPECT_EQ(l405.ffn_hidden_size, 53248);
  EXPECT_EQ(l405.vocab_size, 128256);

  const auto& mx = transformer("mixtral-8x7b");
  ASSERT_TRUE(mx.moe.has_value());
  EXPECT_EQ(mx.moe->num_experts, 8);
  EXPECT_EQ(mx.moe->top_k, 2);
  EXPECT_EQ(mx.moe->every, 1);
  EXPECT_EQ(mx.moe->expert_ffn_hidden_size, 14336);

  const auto& resnet = *find_model("resnet50");
  EXPECT_TRUE(std::holds_alternative<std::vector<LayerSpec>>(resnet.body));
  EXPECT_EQ(resnet.default_seq_len, 0);
}

}  // namespace
}  // namespace clustersim::models
