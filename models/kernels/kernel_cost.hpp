// Time of a kernel, and of the kernel list of an op, on a GPU preset (docs/fidelity.md).
//
//   gemm           gemm_model.hpp: tile/wave quantization, k ceiling, memory roofline
//   attention_*    FLOPs / (peak(dtype) × attention efficiency × wave efficiency), where the
//                  fused kernel runs one CTA per (sequence, head, 128-row block): of queries
//                  forward, of keys backward (FlashAttention-2's partitioning); at least its
//                  bytes at the achievable HBM bandwidth
//   memory         bytes / (HBM bandwidth × memory_efficiency)
//   launch_only    nothing but the launch floor
//
// Every kernel takes at least GpuSpec::kernel_launch_floor_s. An op's kernels run back to back,
// but the host issues them at most one per GpuSpec::host_launch_interval_s, so an op of many short
// kernels is bound by kernels × host interval:
//   kernels_seconds = max(Σ kernel_seconds, count × host_launch_interval_s).
//
// With a calibration profile (docs/fidelity.md "Calibration replaces the defaults"), a GEMM whose
// dtype the profile measured takes the profile's efficiency for its shape
// (ComputeProfile::gemm_efficiency) instead of the tile/wave model:
//   gemm = max(2·m·n·k·batch / (peak(dtype) × e_profile), bytes / HBM share),
// and the profile's measured memory-bound bandwidth replaces hbm_bandwidth × memory_efficiency
// for every kernel (calibrated_gpu).
#pragma once

#include <span>
#include <vector>

#include "engine/kernels.hpp"
#include "models/compute_profile.hpp"
#include "models/hardware.hpp"
#include "models/kernels/kernel_families.hpp"

namespace clustersim::models::kernels {

// Device time of one kernel (floor included). Throws std::invalid_argument naming the GPU and
// the figure it lacks (no peak for the kernel's dtype, no attention efficiency, ...). `profile`
// (optional) overrides GEMM efficiencies; pass the GPU through calibrated_gpu first for its
// memory bandwidth.
double kernel_seconds(const engine::Kernel& kernel, const GpuSpec& gpu,
                      const ComputeProfile* profile = nullptr);

// Time of an op that launches `kernels` in order.
double kernels_seconds(std::span<const engine::Kernel> kernels, const GpuSpec& gpu,
                       const ComputeProfile* profile = nullptr);

// Costs every list of `table` once (index = list index): ops that share a list share its cost,
// so a schedule costs each distinct op shape once, not each op.
std::vector<double> kernel_list_seconds(const engine::KernelTable& table, const GpuSpec& gpu,
                                        const ComputeProfile* profile = nullptr);

// `gpu` with the profile's measured memory-bound bandwidth as its achievable HBM bandwidth
// (memory_efficiency = measured / hbm_bandwidth); `gpu` itself without a profile or without that
// measurement.
GpuSpec calibrated_gpu(const GpuSpec& gpu, const ComputeProfile* profile);

// Whether `gpu` carries the figures the kernel model needs (a preset of docs/presets.md "Kernel
// model figures"); a GPU described only by peaks and bandwidth is costed by the roofline.
bool has_kernel_figures(const GpuSpec& gpu);

// Precision of a kernel's opaque dtype byte; throws on an index that names no precision.
Precision kernel_precision(const engine::Kernel& kernel);

// FlashAttention 1.x's kernels reach this share of the GPU's FlashAttention-2-class attention
// efficiency: Dao 2023 (arXiv:2307.08691), abstract: FlashAttention reaches 25-40 % of the
// A100's peak, FlashAttention-2 "around 2x" faster at 50-73 % (docs/fidelity.md "FlashAttention
// 1").
inline constexpr double kFlash1RelativeEfficiency = 0.5;
inline bool is_flash1(const engine::Kernel& k) {
  return k.variant == kFlash1Variant && (k.kind == engine::KernelKind::attention_fwd ||
                                         k.kind == engine::KernelKind::attention_bwd);
}

// CTA rows of the fused attention kernel (FlashAttention-2 uses 128-row query/key blocks).
inline constexpr int kAttentionBlockRows = 128;

}  // namespace clustersim::models::kernels
