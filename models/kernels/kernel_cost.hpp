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
#pragma once

#include <span>
#include <vector>

#include "engine/kernels.hpp"
#include "models/hardware.hpp"

namespace clustersim::models::kernels {

// Device time of one kernel (floor included). Throws std::invalid_argument naming the GPU and
// the figure it lacks (no peak for the kernel's dtype, no attention efficiency, ...).
double kernel_seconds(const engine::Kernel& kernel, const GpuSpec& gpu);

// Time of an op that launches `kernels` in order.
double kernels_seconds(std::span<const engine::Kernel> kernels, const GpuSpec& gpu);

// Costs every list of `table` once (index = list index): ops that share a list share its cost,
// so a schedule costs each distinct op shape once, not each op.
std::vector<double> kernel_list_seconds(const engine::KernelTable& table, const GpuSpec& gpu);

// Precision of a kernel's opaque dtype byte; throws on an index that names no precision.
Precision kernel_precision(const engine::Kernel& kernel);

// CTA rows of the fused attention kernel (FlashAttention-2 uses 128-row query/key blocks).
inline constexpr int kAttentionBlockRows = 128;

}  // namespace clustersim::models::kernels
