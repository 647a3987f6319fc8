// GPU and node presets. Every figure and its source is listed in docs/presets.md; the comments
// here only say which datasheet a row comes from.
#include "models/hardware.hpp"

#include <algorithm>

#include "models/units.hpp"

namespace clustersim::models {
namespace {

constexpr double kTera = 1e12;

// Dense peaks in TFLOP/s, in Precision order: fp32, tf32, fp16, bf16, fp8 (0 = unsupported).
GpuSpec gpu(std::string name, std::array<double, kNumPrecisions> tflops, double hbm_gb_per_s,
            double memory_gib, double compute_efficiency) {
  GpuSpec g;
  g.name = std::move(name);
  for (int i = 0; i < kNumPrecisions; ++i)
    g.peak_flops[i] = tflops[i] * kTera;
  g.hbm_bandwidth = hbm_gb_per_s * 1e9;
  g.memory_bytes = memory_gib * kGiB;
  g.compute_efficiency = compute_efficiency;
  return g;
}

// Per-op GEMM efficiency absent a calibration profile (docs/presets.md "Efficiency"): 0.7 on
// Volta/Ampere/Ada, where cuBLAS reaches 80-90 % of peak on large GEMMs and a layer's smaller
// kernels pull it down; 0.6 on Hopper/Blackwell, whose larger peaks are harder to feed.
constexpr double kEffAmpere = 0.7;
constexpr double kEffHopper = 0.6;

// Kernel-level figures (docs/presets.md "Kernel model figures" gives each source):
// SMs from the architecture whitepapers/datasheets; e_max fitted so that the GEMM model
// reproduces the measured Maximum Achievable Matmul FLOPS (ml-engineering MAMF table) at its best
// shape; attention efficiencies from FlashAttention-2/-3; launch figures to be fitted.
struct KernelFigures {
  int sm_count;
  double gemm_max_efficiency;
  bool stream_k;
  double attention_fwd;
  double attention_bwd;
  double sustained_compute;
};
// Fused attention per CTA, measured (GpuSpec::attention_tail_share): the long-sequence
// efficiencies, each CTA's overhead in block steps, forward and backward, and the tail share.
struct AttentionPerCta {
  double fwd, bwd, overhead_fwd, overhead_bwd, tail;
};
// cuDNN's fused attention (what Transformer Engine runs on Hopper, and PyTorch 2.11's SDPA),
// fitted on the nine causal bf16 shapes measured on an H200 on 4 Dec 2026
// (validation/hardware/h200-2026-12-04/kernels.json): every forward within 1.5 %, every backward
// within 3.8 % (docs/fidelity.md "Attention per CTA"). H100 SXM is the same die at the same
// clocks; attention does not reach the HBM bound, so it shares them.
constexpr AttentionPerCta kAttentionHopper{0.763, 0.707, 2.2, 4.4, 0.85};
// Share of the isolated tensor-core rate sustained inside a training step, fitted per GPU family
// on validation/training/ by scripts/fit-sustained-compute.py (docs/fidelity.md "Sustained
// compute"): the value with the smallest median |error| over the family's published runs.
constexpr double kSustainedVolta = 0.90;      // 2 figures (DeepLearningExamples BERT, ResNet-50)
constexpr double kSustainedAmpere = 0.83;     // 36 figures; L40S (Ada, no case) borrows it
constexpr double kSustainedHopper = 0.70;     // 23 figures (H100); H200 borrows it
constexpr double kSustainedBlackwell = 0.78;  // 4 figures, 2 cases (B200): a weak fit
constexpr double kLaunchFloorS = 2.5e-6;      // shortest kernel incl. its gap (to be fitted)
constexpr double kHostLaunchS = 5e-6;         // PyTorch eager op + cudaLaunchKernel (to be fitted)

GpuSpec with_kernels(GpuSpec g, const KernelFigures& f) {
  g.sm_count = f.sm_count;
  g.gemm_max_efficiency = f.gemm_max_efficiency;
  g.gemm_stream_k = f.stream_k;
  g.attention_fwd_efficiency = f.attention_fwd;
  g.attention_bwd_efficiency = f.attention_bwd;
  g.sustained_compute_fraction = f.sustained_compute;
  g.kernel_launch_floor_s = kLaunchFloorS;
  g.host_launch_interval_s = kHostLaunchS;
  return g;
}

// The per-CTA figures; the long-sequence efficiencies come in through KernelFigures.
GpuSpec with_attention(GpuSpec g, const AttentionPerCta& a) {
  g.attention_cta_overhead_fwd = a.overhead_fwd;
  g.attention_cta_overhead_bwd = a.overhead_bwd;
  g.attention_tail_share = a.tail;
  return g;
}

std::vector<GpuSpec> make_gpus() {
  std::vector<GpuSpec> gpus;
  //                     fp32   tf32    fp16    bf16    fp8      HBM GB/s  GiB
  // NVIDIA V100 datasheet (SXM2): 15.7 fp32, 125 tensor fp16; no tf32/bf16/fp8.
  gpus.push_back(with_kernels(gpu("V100-SXM2-32GB", {15.7, 0, 125, 0, 0}, 900, 32, kEffAmpere),
                              {80, 0.80, false, 0.35, 0.30, kSustainedVolta}));
  // NVIDIA A100 datasheet: 19.5 fp32, 156 tf32, 312 fp16/bf16 (dense); no fp8.
  gpus.push_back(with_kernels(gpu("A100-SXM4-40GB", {19.5, 156, 312, 312, 0}, 1555, 40, kEffAmpere),
                              {108, 0.902, false, 0.70, 0.55, kSustainedAmpere}));
  gpus.push_back(with_kernels(gpu("A100-SXM4-80GB", {19.5, 156, 312, 312, 0}, 2039, 80, kEffAmpere),
                              {108, 0.902, false, 0.70, 0.55, kSustainedAmpere}));
  // NVIDIA H100 datasheet (SXM5): sparse figures halved for dense.
  gpus.push_back(with_attention(
      with_kernels(
          gpu("H100-SXM5-80GB", {67, 494.5, 989, 989, 1979}, 3350, 80, kEffHopper),
          {132, 0.836, true, kAttentionHopper.fwd, kAttentionHopper.bwd, kSustainedHopper}),
      kAttentionHopper));
  // NVIDIA H200 datasheet: same compute as H100 SXM, 141 GB HBM3e at 4.8 TB/s.
  gpus.push_back(with_attention(
      with_kernels(
          gpu("H200-SXM-141GB", {67, 494.5, 989, 989, 1979}, 4800, 141, kEffHopper),
          {132, 0.836, true, kAttentionHopper.fwd, kAttentionHopper.bwd, kSustainedHopper}),
      kAttentionHopper));
  // NVIDIA HGX B200 datasheet (8-GPU figures / 8, sparse halved): 180 GB HBM3e, 8 TB/s.
  gpus.push_back(with_kernels(gpu("B200", {75, 1125, 2250, 2250, 4500}, 8000, 180, kEffHopper),
                              {148, 0.788, true, 0.60, 0.45, kSustainedBlackwell}));
  // NVIDIA L40S datasheet: 91.6 fp32, 183 tf32, 362.05 fp16/bf16, 733 fp8; 48 GB GDDR6.
  gpus.push_back(with_kernels(gpu("L40S", {91.6, 183, 362.05, 362.05, 733}, 864, 48, kEffAmpere),
                              {142, 0.75, false, 0.55, 0.45, kSustainedAmpere}));
  // A host core pool: one 32-core AVX-512 socket with two FMA units per core at 2.0 GHz
  // all-core: 32 × 2 FMA × 16 fp32 lanes × 2 FLOP × 2.0 GHz = 4.096 TFLOP/s fp32; AVX512_BF16
  // dot products double that for bf16. 8 × DDR5-4800 channels = 307.2 GB/s, 256 GiB.
  GpuSpec cpu = gpu("cpu", {4.096, 0, 0, 8.192, 0}, 307.2, 256, 0.5);
  cpu.memory_efficiency = 0.7;   // STREAM triad on such sockets reaches ~70 % of DDR peak
  cpu.launch_overhead_s = 1e-6;  // a function call and a thread-pool wake-up, no kernel launch
  gpus.push_back(cpu);
  std::sort(gpus.begin(), gpus.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return gpus;
}

using engine::Bandwidth;
using engine::IntraNodeFabric;
using engine::NodeTopologySpec;

// PCIe per direction, effective: Gen4 x16 is 31.5 GB/s raw after 128b/130b encoding, ~25 GB/s
// after TLP/DLLP overhead (what cudaMemcpy and nccl-tests reach); Gen5 doubles both.
constexpr double kPcieGen4 = 25;
constexpr double kPcieGen5 = 50;

NodeTopologySpec nvswitch_node(double nvlink_gb_per_s, double pcie_gb_per_s, double cpu_link_gb,
                               double nic_gbit) {
  NodeTopologySpec t;
  t.fabric = IntraNodeFabric::nvswitch;
  t.gpus = 8;
  t.nvlink_bandwidth = Bandwidth::gigabytes_per_second(nvlink_gb_per_s);
  t.pcie_bandwidth = Bandwidth::gigabytes_per_second(pcie_gb_per_s);
  t.gpus_per_pcie_switch = 2;  // 4 PCIe switches, each with 2 GPUs and their 2 NICs
  t.cpus = 2;
  t.cpu_interconnect_bandwidth = Bandwidth::gigabytes_per_second(cpu_link_gb);
  t.nics = 8;  // one compute NIC per GPU
  t.nic_bandwidth = Bandwidth::gigabits_per_second(nic_gbit);
  return t;
}

NodeSpec node(std::string name, std::string gpu_name, NodeTopologySpec t, HostSpec host) {
  return NodeSpec{std::move(name), std::move(gpu_name), t, host};
}

// Host memory: capacity in GiB (DIMMs come in binary sizes: "2 TB" is 32 × 64 GiB) and the DRAM
// peak of `sockets` × `channels` channels at `mt_per_s` MT/s, 8 bytes per transfer
// (docs/presets.md "Host memory").
HostSpec host_memory(double gibibytes, int sockets, int channels, double mt_per_s) {
  HostSpec h;
  h.memory_bytes = gibibytes * 1024.0 * 1024.0 * 1024.0;
  h.memory_bandwidth = sockets * channels * mt_per_s * 1e6 * 8.0;
  return h;
}

std::vector<NodeSpec> make_nodes() {
  std::vector<NodeSpec> nodes;
  // DGX A100 user guide: NVLink 3 600 GB/s bidirectional per GPU, 4 PCIe Gen4 switches,
  // 2× EPYC 7742 (4 xGMI-2 x16 links, ~128 GB/s raw, 96 GB/s taken), 8× 200 Gb/s HDR.
  NodeTopologySpec dgx_a100 = nvswitch_node(300, kPcieGen4, 96, 200);
  dgx_a100.amd_cpu = true;  // NCCL's tuner reads the CPU vendor across nodes (EPYC: AMD)
  nodes.push_back(node("dgx-a100", "A100-SXM4-80GB", dgx_a100,
                       host_memory(2048, 2, 8, 3200)));  // 2 TB, 8 × DDR4-3200 per EPYC 7742
  // DGX H100 user guide: NVLink 4 900 GB/s bidirectional per GPU, PCIe Gen5, 2× Xeon 8480C
  // (4 UPI 2.0 links at 16 GT/s, ~128 GB/s raw, 96 GB/s taken), 8× 400 Gb/s NDR.
  nodes.push_back(node("dgx-h100", "H100-SXM5-80GB", nvswitch_node(450, kPcieGen5, 96, 400),
                       host_memory(2048, 2, 8, 4400)));  // 2 TB in 32 DIMMs: two a channel
  // (Sapphire Rapids runs DDR5-4800 at 4400 MT/s with two DIMMs a channel).
  // DGX B200 user guide ("Introduction to NVIDIA DGX B200 Systems"): 8 × B200, NVLink 5 through
  // 2 NVSwitch chips (14.4 TB/s aggregate: 1.8 TB/s bidirectional a GPU), 8 × ConnectX-7 at
  // 400 Gb/s, 2 × Xeon 8570 (Emerald Rapids, PCIe Gen5; 4 UPI links at 20 GT/s, ~160 GB/s raw,
  // 120 GB/s taken), 2 TB in 32 DIMMs: two a channel, which Emerald Rapids runs at DDR5-4400.
  nodes.push_back(node("dgx-b200", "B200", nvswitch_node(900, kPcieGen5, 120, 400),
                       host_memory(2048, 2, 8, 4400)));
  // DGX H200: the same two Xeon 8480C and 2 TB as DGX H100.
  nodes.push_back(node("hgx-h200", "H200-SXM-141GB", nvswitch_node(450, kPcieGen5, 96, 400),
                       host_memory(2048, 2, 8, 4400)));

  // AWS p5.48xlarge (EC2 P5 instance page; user guide "EFA configuration for P5"): 8 × H100
  // SXM on NVSwitch, 2 × 3rd-generation AMD EPYC (8 × DDR4-3200 each assumed), 2 TiB, and 3,200
  // Gb/s of EFAv2 as 32 interfaces of 100 Gb/s, four per GPU: aws-ofi-nccl groups each GPU's
  // four into one device (engine::nic_devices) and reports a 75 µs latency to NCCL's tuner on
  // p5 (src/platform-aws.cpp).
  NodeTopologySpec p5 = nvswitch_node(450, kPcieGen5, 96, 100);
  p5.nics = 32;
  p5.amd_cpu = true;
  p5.nic_plugin_latency = engine::Time::from_seconds(75e-6);
  nodes.push_back(node("aws-p5", "H100-SXM5-80GB", p5, host_memory(2048, 2, 8, 3200)));

  // AWS p4de.24xlarge (EC2 P4 instance page): 8 × A100 80 GB on NVSwitch (600 GB/s
  // bidirectional), 2 × Intel Xeon Platinum 8275CL (6 × DDR4-2933 each; 3 UPI links at 10.4
  // GT/s, ~62 GB/s raw, 47 GB/s taken), 1,152 GiB, and 400 Gb/s of EFA as 4 interfaces of 100
  // Gb/s, one per PCIe switch of 2 GPUs; aws-ofi-nccl reports 75 µs to NCCL on p4d and p4de
  // (src/platform-aws.cpp, since 31 May 2023).
  NodeTopologySpec p4de = nvswitch_node(300, kPcieGen4, 47, 100);
  p4de.nics = 4;
  p4de.nic_plugin_latency = engine::Time::from_seconds(75e-6);
  nodes.push_back(node("aws-p4de", "A100-SXM4-80GB", p4de, host_memory(1152, 2, 6, 2933)));

  // A typical 8× L40S PCIe server: 4 Gen4 switches of 2 GPUs, 2 Xeon sockets joined by 3 UPI
  // links at 11.2 GT/s (~67 GB/s raw, 50 GB/s taken), 2× 200 Gb/s NICs (one per socket side).
  NodeTopologySpec pcie8;
  pcie8.fabric = IntraNodeFabric::pcie;
  pcie8.gpus = 8;
  pcie8.nvlink_bridges = false;  // L40S has no NVLink
  pcie8.pcie_bandwidth = Bandwidth::gigabytes_per_second(kPcieGen4);
  pcie8.gpus_per_pcie_switch = 2;
  pcie8.cpus = 2;
  pcie8.cpu_interconnect_bandwidth = Bandwidth::gigabytes_per_second(50);
  pcie8.nics = 2;
  pcie8.nic_bandwidth = Bandwidth::gigabits_per_second(200);
  // Host memory assumed: 1 TB on two 4th-generation Xeons, 8 × DDR5-4800 each.
  nodes.push_back(node("pcie-8gpu", "L40S", pcie8, host_memory(1024, 2, 8, 4800)));

  // A 4-GPU workstation: each GPU on its own Gen4 x16 root port of one CPU, no switch, no
  // bridges, one 100 Gb/s NIC.
  NodeTopologySpec ws = pcie8;
  ws.gpus = 4;
  ws.gpus_per_pcie_switch = 0;
  ws.cpus = 1;
  ws.nics = 1;
  ws.nic_bandwidth = Bandwidth::gigabits_per_second(100);
  // Host memory assumed: 512 GiB on one socket with 8 × DDR5-4800 channels.
  nodes.push_back(node("pcie-4gpu-workstation", "L40S", ws, host_memory(512, 1, 8, 4800)));
  std::sort(nodes.begin(), nodes.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  return nodes;
}

const std::vector<GpuSpec>& all_gpus() {
  static const std::vector<GpuSpec> gpus = make_gpus();
  return gpus;
}

const std::vector<NodeSpec>& all_nodes() {
  static const std::vector<NodeSpec> nodes = make_nodes();
  return nodes;
}

template <typename T>
const T* find_by_name(const std::vector<T>& items, std::string_view name) {
  for (const auto& item : items)
    if (item.name == name) return &item;
  return nullptr;
}

template <typename T>
std::vector<std::string> names_of(const std::vector<T>& items) {
  std::vector<std::string> names;
  for (const auto& item : items)
    names.push_back(item.name);
  return names;  // already sorted
}

}  // namespace

std::string_view to_string(Precision p) {
  return kPrecisionNames.name(p);
}

std::optional<Precision> parse_precision(std::string_view text) {
  return kPrecisionNames.parse(text);
}

int bytes_per_element(Precision p) {
  switch (p) {
    case Precision::fp32:
    case Precision::tf32:
      return 4;
    case Precision::fp16:
    case Precision::bf16:
      return 2;
    case Precision::fp8:
      return 1;
  }
  return 4;  // unreachable: every enumerator is handled above
}

int stored_element_bytes(Precision p) {
  return p == Precision::fp8 ? 2 : bytes_per_element(p);
}

const GpuSpec* find_gpu(std::string_view name) {
  return find_by_name(all_gpus(), name);
}
const NodeSpec* find_node(std::string_view name) {
  return find_by_name(all_nodes(), name);
}
std::vector<std::string> gpu_names() {
  return names_of(all_gpus());
}
std::vector<std::string> node_names() {
  return names_of(all_nodes());
}

}  // namespace clustersim::models
