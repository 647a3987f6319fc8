// GPU and node presets (DESIGN.md "Compute model"; docs/presets.md gives each figure's source).
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/names.hpp"
#include "engine/topology_builders.hpp"

namespace clustersim::models {

enum class Precision : std::uint8_t { fp32, tf32, fp16, bf16, fp8 };
inline constexpr int kNumPrecisions = 5;
inline constexpr engine::NameTable kPrecisionNames{
    std::array<std::pair<Precision, std::string_view>, kNumPrecisions>{{
        {Precision::fp32, "fp32"},
        {Precision::tf32, "tf32"},
        {Precision::fp16, "fp16"},
        {Precision::bf16, "bf16"},
        {Precision::fp8, "fp8"},
    }}};
std::string_view to_string(Precision);
std::optional<Precision> parse_precision(
    std::string_view);             // "fp32", "tf32", "fp16", "bf16", "fp8"
int bytes_per_element(Precision);  // fp32/tf32 4, fp16/bf16 2, fp8 1
// What a tensor of a run at this precision is stored and sent in: fp8 training keeps bf16
// weights, activations and messages (only GEMM operands are fp8), else bytes_per_element.
int stored_element_bytes(Precision);

struct GpuSpec {
  std::string name;
  // Dense peak FLOP/s per precision (0 = not supported), indexed by Precision.
  std::array<double, kNumPrecisions> peak_flops{};
  double hbm_bandwidth = 0.0;       // bytes/s
  double memory_bytes = 0.0;        // bytes
  double compute_efficiency = 0.7;  // achieved fraction of peak on large GEMMs, absent a profile
  double memory_efficiency = 0.8;   // achieved fraction of HBM bandwidth
  double launch_overhead_s = 4e-6;  // per op (kernel launches of one layer's op)

  // Kernel-level compute model (models/kernels/, docs/fidelity.md). 0 = not known for this
  // preset: costing a kernel that needs the figure is an error naming the GPU and the figure.
  int sm_count = 0;  // streaming multiprocessors (wave size of a GEMM)
  // SMs that other kernels hold while these run: NCCL's CTAs, one per channel, of a collective
  // overlapping them (engine/sm_sharing.hpp). Waves run on the rest at the same rate per SM;
  // cuBLAS still picks tiles for the whole GPU (it cannot know). Not a preset figure: 0 there.
  int sms_held = 0;
  double gemm_max_efficiency = 0.0;       // e_max: cuBLAS ceiling for 16-bit GEMMs, × peak
  bool gemm_stream_k = false;             // persistent stream-K GEMMs soften wave quantization
  double attention_fwd_efficiency = 0.0;  // fused (flash) attention forward, × peak
  double attention_bwd_efficiency = 0.0;  // fused (flash) attention backward, × peak
  // Fused attention costed per CTA (docs/fidelity.md "Attention per CTA"), where measured: each
  // CTA's fixed cost (loading its block, writing its result) in 128 × 128 block steps of its loop,
  // forward and backward, and the share of the longest CTA's time that outlasts the even spread
  // of the work over the SMs (causal attention's last blocks do the most). With a tail share the
  // two efficiencies above are the long-sequence asymptotes; without one (0: not measured) they
  // apply to every shape, with wave quantization only.
  double attention_cta_overhead_fwd = 0.0;
  double attention_cta_overhead_bwd = 0.0;
  double attention_tail_share = 0.0;
  double kernel_launch_floor_s = 0.0;   // shortest device time of any kernel (with its gap)
  double host_launch_interval_s = 0.0;  // host time to issue one kernel (framework + driver)
  // Share of the isolated-kernel tensor-core throughput (GEMMs, fused attention) sustained inside
  // a training step: clocks under the power limit, cache interference (NCCL kernels that share
  // the SMs are modelled apart: sms_held). Fitted per GPU family on validation/ (docs/fidelity.md
  // "Sustained compute").
  double sustained_compute_fraction = 1.0;
  // Bytes/s of host memory that one rank's CPU work (ZeRO-Offload's CPU optimizer step) reaches:
  // the node's achievable DRAM bandwidth shared by its GPUs' ranks, which step at the same time.
  // Set from cluster.host (HostSpec::rank_bandwidth); 0: unknown (costing host work is an error).
  double host_memory_bandwidth = 0.0;
};

// A node's host memory (docs/presets.md "Host memory"), where parallel.offload puts optimizer
// states and activations (docs/offload.md). 0: unknown.
struct HostSpec {
  double memory_bytes = 0.0;      // DRAM of the whole node
  double memory_bandwidth = 0.0;  // bytes/s, peak: channels × transfer rate × 8 B, all sockets
  // Share of the peak that a streaming CPU kernel reaches. 0.7 is an assumption: STREAM triad on
  // server sockets reaches roughly 70-80 % of the DDR peak (the `cpu` GPU preset takes 0.7 too).
  double memory_efficiency = 0.7;
  // One rank's share of the achievable bandwidth when `ranks` ranks of the node work at once.
  double rank_bandwidth(int ranks) const {
    return ranks > 0 ? memory_bandwidth * memory_efficiency / ranks : 0.0;
  }
};

struct NodeSpec {
  std::string name;
  std::string gpu;  // a GpuSpec name
  engine::NodeTopologySpec topology;
  HostSpec host;
};

const GpuSpec* find_gpu(std::string_view name);
const NodeSpec* find_node(std::string_view name);
std::vector<std::string> gpu_names();
std::vector<std::string> node_names();

}  // namespace clustersim::models
