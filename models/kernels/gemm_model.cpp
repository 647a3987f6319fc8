#include "models/kernels/gemm_model.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>

namespace clustersim::models::kernels {
namespace {

// Candidate CTA tiles. NVIDIA's guide (§2.3) lists the tiles cuBLAS chooses from, most efficient
// first: 256×128 and 128×256, then 128×128, 256×64 / 64×256, 128×64 / 64×128, and 64×64 least.
// CTAs per SM: the guide states one 256×128 CTA per A100 SM; the smaller tiles' counts follow
// from halving the shared-memory and register footprint per CTA. The relative efficiencies keep
// the guide's order; their values are assumptions to be fitted on a calibration sweep
// (docs/fidelity.md).
constexpr std::array<GemmTile, 8> kTiles = {{
    {256, 128, 1, 1.00},
    {128, 256, 1, 1.00},
    {128, 128, 2, 0.92},
    {256, 64, 2, 0.90},
    {64, 256, 2, 0.90},
    {128, 64, 3, 0.82},
    {64, 128, 3, 0.82},
    {64, 64, 4, 0.65},
}};

// Split-K factors tried when the output tiles alone fill less than one wave.
constexpr std::array<int, 8> kSplitK = {1, 2, 4, 8, 16, 32, 64, 128};

// fp8 GEMMs reach a lower fraction of their (doubled) peak: on H100 SXM the ml-engineering MAMF
// table measures 1402.6 of 1979 TFLOP/s for fp8 (70.9 %) against 794.5 of 989 for bf16 (80.3 %).
constexpr double kFp8CeilingRatio = 0.709 / 0.803;

constexpr double kPartialBytes = 4.0;  // split-K partial sums are fp32

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) {
  return (a + b - 1) / b;
}

[[noreturn]] void missing(const GpuSpec& gpu, const std::string& figure) {
  throw std::invalid_argument("GPU '" + gpu.name + "' has no " + figure +
                              " (needed by the GEMM model)");
}

double peak_of(const GpuSpec& gpu, Precision dtype) {
  const double p = gpu.peak_flops[static_cast<std::size_t>(dtype)];
  if (!(p > 0)) missing(gpu, std::string(to_string(dtype)) + " peak FLOP/s");
  return p;
}

void check(const GemmShape& s, const GpuSpec& gpu) {
  if (s.m == 0 || s.n == 0 || s.k == 0 || s.batch == 0)
    throw std::invalid_argument("GEMM with a zero dimension (m, n, k and batch must be >= 1)");
  if (gpu.sm_count <= 0) missing(gpu, "sm_count");
  if (!(gpu.hbm_bandwidth > 0) || !(gpu.memory_efficiency > 0)) missing(gpu, "memory bandwidth");
  if (!(gpu.sustained_compute_fraction > 0) || gpu.sustained_compute_fraction > 1)
    missing(gpu, "sustained_compute_fraction in (0, 1]");
}

}  // namespace

std::span<const GemmTile> gemm_tile_candidates() {
  return kTiles;
}

double gemm_ceiling(const GpuSpec& gpu, Precision dtype) {
  if (!(gpu.gemm_max_efficiency > 0)) missing(gpu, "gemm_max_efficiency");
  return dtype == Precision::fp8 ? gpu.gemm_max_efficiency * kFp8CeilingRatio
                                 : gpu.gemm_max_efficiency;
}

GemmEstimate estimate_gemm(const GemmShape& s, const GpuSpec& gpu, const GemmTile& tile,
                           int split_k) {
  check(s, gpu);
  const double peak = peak_of(gpu, s.dtype);
  const double e_max = gemm_ceiling(gpu, s.dtype);
  const double elem = bytes_per_element(s.dtype);
  const double hbm = gpu.hbm_bandwidth * gpu.memory_efficiency;
  const auto tm = static_cast<std::uint64_t>(tile.tm);
  const auto tn = static_cast<std::uint64_t>(tile.tn);
  const auto split = static_cast<std::uint64_t>(split_k < 1 ? 1 : split_k);

  GemmEstimate e;
  e.tile = tile;
  e.split_k = static_cast<int>(split);
  const std::uint64_t tiles_m = ceil_div(s.m, tm);
  const std::uint64_t tiles_n = ceil_div(s.n, tn);
  e.ctas = tiles_m * tiles_n * s.batch * split;
  const auto per_sm = static_cast<std::uint64_t>(tile.ctas_per_sm);
  const std::uint64_t slots = static_cast<std::uint64_t>(gpu.sm_count) * per_sm;
  // Waves run on the SMs other kernels leave (GpuSpec::sms_held), each slot at its full-GPU rate.
  const std::uint64_t free_slots = static_cast<std::uint64_t>(free_sms(gpu)) * per_sm;
  const double ctas = static_cast<double>(e.ctas);
  const double whole_waves = static_cast<double>(ceil_div(e.ctas, free_slots));
  e.waves = gpu.gemm_stream_k && e.ctas > free_slots ? ctas / static_cast<double>(free_slots)
                                                     : whole_waves;
  e.wave_efficiency = ctas / (e.waves * static_cast<double>(slots));
  e.tile_fill = static_cast<double>(s.m) * static_cast<double>(s.n) /
                (static_cast<double>(tiles_m * tm) * static_cast<double>(tiles_n * tn));
  const double k_split = static_cast<double>(ceil_div(s.k, split));
  e.k_ceiling = e_max * tile.relative_efficiency * k_split / (k_split + kGemmKHalf);

  // One wave: every slot computes a padded tm × tn × k' tile at its share of the SM's rate.
  const double slot_rate =
      peak * gpu.sustained_compute_fraction / static_cast<double>(slots) * e.k_ceiling;
  const double wave_s = 2.0 * static_cast<double>(tm * tn) * k_split / slot_rate;
  double compute_s = e.waves * wave_s;
  const double mn =
      static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.batch);
  if (split > 1)  // write and read back the fp32 partial sums, write C
    compute_s += (2.0 * static_cast<double>(split) * kPartialBytes + elem) * mn / hbm;
  e.compute_seconds = compute_s;

  const double bytes = (static_cast<double>(s.m) * static_cast<double>(s.k) +
                        static_cast<double>(s.k) * static_cast<double>(s.n) +
                        static_cast<double>(s.m) * static_cast<double>(s.n)) *
                       elem * static_cast<double>(s.batch);
  e.memory_seconds = bytes / hbm;
  e.seconds = e.compute_seconds > e.memory_seconds ? e.compute_seconds : e.memory_seconds;
  const double flops = 2.0 * mn * static_cast<double>(s.k);
  e.efficiency = flops / (e.seconds * peak);
  return e;
}

int free_sms(const GpuSpec& gpu) {
  return std::max(1, gpu.sm_count - std::max(0, gpu.sms_held));
}

GemmEstimate estimate_gemm(const GemmShape& s, const GpuSpec& gpu) {
  if (gpu.sms_held > 0) {  // cuBLAS picks the tile for the whole GPU; it runs on what is left
    GpuSpec whole = gpu;
    whole.sms_held = 0;
    const GemmEstimate chosen = estimate_gemm(s, whole);
    return estimate_gemm(s, gpu, chosen.tile, chosen.split_k);
  }
  check(s, gpu);
  GemmEstimate best;
  bool have = false;
  for (const GemmTile& tile : kTiles) {
    for (int split : kSplitK) {
      if (split > 1) {
        // Split-K only when the output tiles alone leave SMs idle, and each split keeps a
        // k-loop of at least a few tile steps.
        const std::uint64_t ctas = ceil_div(s.m, static_cast<std::uint64_t>(tile.tm)) *
                                   ceil_div(s.n, static_cast<std::uint64_t>(tile.tn)) * s.batch;
        const std::uint64_t slots =
            static_cast<std::uint64_t>(gpu.sm_count) * static_cast<std::uint64_t>(tile.ctas_per_sm);
        if (ctas >= slots || s.k / static_cast<std::uint64_t>(split) < 4 * kGemmKHalf) break;
      }
      const GemmEstimate e = estimate_gemm(s, gpu, tile, split);
      if (!have || e.seconds < best.seconds) {  // ties keep the larger, earlier tile
        best = e;
        have = true;
      }
    }
  }
  return best;
}

}  // namespace clustersim::models::kernels
