#include "models/kernels/kernel_cost.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "models/kernels/gemm_model.hpp"

namespace clustersim::models::kernels {
namespace {

[[noreturn]] void missing(const GpuSpec& gpu, const std::string& figure, std::string_view what) {
  throw std::invalid_argument("GPU '" + gpu.name + "' has no " + figure + " (needed to cost " +
                              std::string(what) + " kernels)");
}

double memory_seconds(double bytes, const GpuSpec& gpu) {
  const double bw = gpu.hbm_bandwidth * gpu.memory_efficiency;
  if (!(bw > 0)) missing(gpu, "memory bandwidth", "memory-bound");
  return bytes / bw;
}

// The fused kernel's shape factor where it is measured per CTA (GpuSpec::attention_tail_share):
// the counted FLOPs over the work the SMs do, each a share of the kernel's time. Each CTA owns one
// 128-row block of the parallelized length (queries forward, keys backward) and steps through the
// blocks of the other; causal, block j of n steps through about j·(loop/n) of them (the diagonal
// block in full). The work spreads over the free SMs, plus each CTA's fixed overhead, plus the
// share of the longest CTA that outlasts the spread:
//   steps = batch · Σ_j (w_j + overhead) / free_SMs + tail · (w_max + overhead)
// and the counted FLOPs are batch · m·n/128² block steps (half of them causal), so at long
// sequences and many heads the factor tends to SMs / SMs = 1.
double attention_shape_factor(const engine::Kernel& k, const GpuSpec& gpu, bool forward) {
  constexpr double rows = kAttentionBlockRows;
  const double par = std::ceil(static_cast<double>(forward ? k.m : k.n) / rows);
  const double loop = std::ceil(static_cast<double>(forward ? k.n : k.m) / rows);
  const double overhead = forward ? gpu.attention_cta_overhead_fwd : gpu.attention_cta_overhead_bwd;
  const double steps_per_sequence = k.causal ? loop * (par + 1) / 2 : par * loop;
  const double batch = static_cast<double>(std::max<std::uint64_t>(1, k.batch));
  const double steps = batch * (steps_per_sequence + overhead * par) / free_sms(gpu) +
                       gpu.attention_tail_share * (loop + overhead);
  double counted = batch * static_cast<double>(k.m) * static_cast<double>(k.n) / (rows * rows);
  if (k.causal) counted /= 2;
  if (!(counted > 0)) return 1.0;  // an empty attention: no steps, nothing to spread
  return counted / (steps * gpu.sm_count);
}

double attention_seconds(const engine::Kernel& k, const GpuSpec& gpu) {
  const bool forward = k.kind == engine::KernelKind::attention_fwd;
  const double eff = (forward ? gpu.attention_fwd_efficiency : gpu.attention_bwd_efficiency) *
                     (is_flash1(k) ? kFlash1RelativeEfficiency : 1.0);
  if (!(eff > 0))
    missing(gpu, forward ? "attention_fwd_efficiency" : "attention_bwd_efficiency", "attention");
  if (gpu.sm_count <= 0) missing(gpu, "sm_count", "attention");
  if (!(gpu.sustained_compute_fraction > 0))
    missing(gpu, "sustained_compute_fraction", "attention");
  const Precision p = kernel_precision(k);
  const double peak = gpu.peak_flops[static_cast<std::size_t>(p)];
  if (!(peak > 0)) missing(gpu, std::string(to_string(p)) + " peak FLOP/s", "attention");
  double flops = k.flops;
  if (!(flops > 0)) {  // from the shape, FlashAttention's count
    flops = 4.0 * static_cast<double>(k.batch) * static_cast<double>(k.m) *
            static_cast<double>(k.n) * static_cast<double>(k.k);
    if (k.causal) flops /= 2;
    if (!forward) flops *= 2.5;
  }
  double shape_factor = 0;
  if (gpu.attention_tail_share > 0) {
    shape_factor = attention_shape_factor(k, gpu, forward);
  } else {
    // One CTA per (sequence × head, 128-row block of the parallelized length), in waves.
    const std::uint64_t rows = forward ? k.m : k.n;
    const std::uint64_t blocks =
        (rows + kAttentionBlockRows - 1) / static_cast<std::uint64_t>(kAttentionBlockRows);
    const double ctas = static_cast<double>(std::max<std::uint64_t>(1, k.batch * blocks));
    const double slots = gpu.sm_count;
    const double free = free_sms(gpu);  // the CTAs run on the SMs communication leaves
    double waves = std::ceil(ctas / free);
    if (gpu.gemm_stream_k && ctas > free) waves = ctas / free;  // persistent scheduling
    shape_factor = ctas / (waves * slots);
  }
  const double compute = flops / (peak * gpu.sustained_compute_fraction * eff * shape_factor);
  return std::max(compute, memory_seconds(k.bytes, gpu));
}

// A GEMM at the profile's measured efficiency for its shape.
double profiled_gemm_seconds(const engine::Kernel& k, Precision p, const GpuSpec& gpu,
                             const ComputeProfile& profile) {
  if (k.m == 0 || k.n == 0 || k.k == 0 || k.batch == 0)
    throw std::invalid_argument("GEMM with a zero dimension (m, n, k and batch must be >= 1)");
  const double peak = gpu.peak_flops[static_cast<std::size_t>(p)];
  if (!(peak > 0)) missing(gpu, std::string(to_string(p)) + " peak FLOP/s", "GEMM");
  const double e = profile.gemm_efficiency(to_string(p), k.m, k.n, k.k, k.batch, peak);
  const double m = static_cast<double>(k.m), n = static_cast<double>(k.n),
               kk = static_cast<double>(k.k), b = static_cast<double>(k.batch);
  // Measured on the whole GPU: with SMs held, its rate shrinks with the SMs left.
  const double share = gpu.sm_count > 0 ? static_cast<double>(free_sms(gpu)) / gpu.sm_count : 1.0;
  const double compute = 2.0 * m * n * kk * b / (peak * gpu.sustained_compute_fraction * e * share);
  const double bytes = (m * kk + kk * n + m * n) * bytes_per_element(p) * b;
  return std::max(compute, memory_seconds(bytes, gpu));
}

}  // namespace

Precision kernel_precision(const engine::Kernel& kernel) {
  if (kernel.dtype >= kNumPrecisions)
    throw std::invalid_argument("kernel dtype " + std::to_string(kernel.dtype) +
                                " names no precision");
  return static_cast<Precision>(kernel.dtype);
}

bool has_kernel_figures(const GpuSpec& gpu) {
  return gpu.sm_count > 0 && gpu.gemm_max_efficiency > 0 && gpu.kernel_launch_floor_s > 0 &&
         gpu.host_launch_interval_s > 0;
}

GpuSpec calibrated_gpu(const GpuSpec& gpu, const ComputeProfile* profile) {
  GpuSpec out = gpu;
  if (profile != nullptr && profile->memory_bandwidth() > 0 && gpu.hbm_bandwidth > 0)
    out.memory_efficiency = profile->memory_bandwidth() / gpu.hbm_bandwidth;
  return out;
}

double kernel_seconds(const engine::Kernel& k, const GpuSpec& gpu, const ComputeProfile* profile) {
  if (!(gpu.kernel_launch_floor_s > 0))
    missing(gpu, "kernel_launch_floor_s", engine::to_string(k.kind));
  double t = 0;
  switch (k.kind) {
    case engine::KernelKind::gemm: {
      const Precision p = kernel_precision(k);
      t = profile != nullptr && profile->has(to_string(p))
              ? profiled_gemm_seconds(k, p, gpu, *profile)
              : estimate_gemm({k.m, k.n, k.k, k.batch, p}, gpu).seconds;
      break;
    }
    case engine::KernelKind::attention_fwd:
    case engine::KernelKind::attention_bwd:
      t = attention_seconds(k, gpu);
      break;
    case engine::KernelKind::memory:
      t = memory_seconds(k.bytes, gpu);
      break;
    case engine::KernelKind::launch_only:
      break;
    case engine::KernelKind::host_memory:
      // On the CPU: no GPU launch floor; the host's bandwidth share of this rank.
      if (!(gpu.host_memory_bandwidth > 0)) missing(gpu, "host_memory_bandwidth", "host_memory");
      return k.bytes / gpu.host_memory_bandwidth;
  }
  return std::max(t, gpu.kernel_launch_floor_s);
}

double kernels_seconds(std::span<const engine::Kernel> kernels, const GpuSpec& gpu,
                       const ComputeProfile* profile) {
  if (kernels.empty()) return 0.0;
  if (!(gpu.host_launch_interval_s > 0))
    missing(gpu, "host_launch_interval_s", engine::to_string(kernels.front().kind));
  double device = 0;
  for (const auto& k : kernels)
    device += kernel_seconds(k, gpu, profile);
  const double host = static_cast<double>(kernels.size()) * gpu.host_launch_interval_s;
  return std::max(device, host);
}

std::vector<double> kernel_list_seconds(const engine::KernelTable& table, const GpuSpec& gpu,
                                        const ComputeProfile* profile) {
  std::vector<double> seconds(table.size());
  for (std::uint32_t i = 0; i < table.size(); ++i)
    seconds[i] = kernels_seconds(table.list(i), gpu, profile);
  return seconds;
}

}  // namespace clustersim::models::kernels
