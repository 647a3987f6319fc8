// Time of one GEMM on a GPU preset from its shape (docs/fidelity.md "GEMMs").
//
// cuBLAS computes C = A·B by tiles: each CTA (thread block) computes a tm × tn tile of C,
// stepping through k; CTAs run in waves of (SMs × CTAs per SM). Following NVIDIA's "Matrix
// Multiplication Background User's Guide" (DU-09799-001, §2.3 tile dimensions, §3.1 tile and §3.2
// wave quantization), the efficiency of a GEMM is
//
//   e = e_max · rel(tile) · k'/(k' + k_half) · tile_fill · wave_efficiency
//
//   tile_fill        = m·n / (ceil(m/tm)·tm · ceil(n/tn)·tn)       (tile quantization)
//   wave_efficiency  = CTAs / (waves · SMs · CTAs per SM)           (wave quantization)
//                      waves = ceil(CTAs / slots); with a persistent stream-K schedule
//                      (GpuSpec::gemm_stream_k) the last partial wave is shared out along k, so
//                      waves = max(1, CTAs / slots)
//   k'/(k' + k_half)   the per-tile prologue/epilogue (pipeline fill, writing C) amortized over
//                      the k loop: small k cannot reach the ceiling; k' = k / split_k
//   rel(tile)          smaller tiles reuse less data and run below the largest ones
//   e_max              the best cuBLAS reaches on this GPU (GpuSpec::gemm_max_efficiency)
//
// and time = max(FLOPs / (peak(dtype) · sustained · e) + split-K reduction,
//                bytes / (HBM · memory_eff)),
// where sustained = GpuSpec::sustained_compute_fraction (1 reproduces isolated measurements),
// bytes = (m·k + k·n + m·n) · element size · batch. Among a fixed candidate set of tiles and
// split-K factors the model takes the fastest, as cuBLAS's heuristics aim to.
#pragma once

#include <cstdint>
#include <span>

#include "models/hardware.hpp"

namespace clustersim::models::kernels {

struct GemmShape {
  std::uint64_t m = 0;
  std::uint64_t n = 0;
  std::uint64_t k = 0;
  std::uint64_t batch = 1;
  Precision dtype = Precision::bf16;
};

// A CTA tile of the candidate set, with how many such CTAs one SM runs at once and its
// efficiency relative to the largest tiles (docs/fidelity.md lists the set and its sources).
struct GemmTile {
  int tm = 0;
  int tn = 0;
  int ctas_per_sm = 1;
  double relative_efficiency = 1.0;
};
std::span<const GemmTile> gemm_tile_candidates();

// k at which the prologue/epilogue halves a tile's efficiency (docs/fidelity.md).
inline constexpr double kGemmKHalf = 128.0;

struct GemmEstimate {
  double seconds = 0;          // max(compute_seconds, memory_seconds)
  double compute_seconds = 0;  // tiles in waves, plus the split-K reduction
  double memory_seconds = 0;   // operands and result once through HBM
  double efficiency = 0;       // 2·m·n·k·batch / (seconds · peak(dtype)), the datasheet peak
  GemmTile tile;
  int split_k = 1;
  std::uint64_t ctas = 0;  // CTAs launched (tiles × batch × split_k)
  double waves = 0;        // whole waves; fractional with a stream-K schedule
  double wave_efficiency = 0;
  double tile_fill = 0;
  double k_ceiling = 0;  // e_max · rel(tile) · k'/(k' + k_half)
};

// Throws std::invalid_argument naming the GPU and the missing figure (no peak for the dtype, no
// SM count, no GEMM ceiling) or a zero dimension.
GemmEstimate estimate_gemm(const GemmShape& shape, const GpuSpec& gpu);
// The same with the tile and split-K forced (tests, what-if studies).
GemmEstimate estimate_gemm(const GemmShape& shape, const GpuSpec& gpu, const GemmTile& tile,
                           int split_k);
inline double gemm_seconds(const GemmShape& shape, const GpuSpec& gpu) {
  return estimate_gemm(shape, gpu).seconds;
}

// SMs left to a kernel: sm_count - sms_held, at least one.
int free_sms(const GpuSpec& gpu);

// e_max for `dtype`: GpuSpec::gemm_max_efficiency for 16-bit and 32-bit types, scaled for fp8.
double gemm_ceiling(const GpuSpec& gpu, Precision dtype);

}  // namespace clustersim::models::kernels
