// The GEMM model against closed forms and published measurements: NVIDIA's "Matrix
// Multiplication Background User's Guide" (DU-09799-001; §3.1 tile and §3.2 wave quantization on
// A100's 108 SMs, Table 1's arithmetic intensities) and the Maximum Achievable Matmul FLOPS
// (MAMF) table of stas00/ml-engineering (compute/accelerator/README.md).
#include <gtest/gtest.h>

#include <stdexcept>

#include "models/hardware.hpp"
#include "models/kernels/gemm_model.hpp"

namespace clustersim::models::kernels {
namespace {

constexpr double T = 1e12;

// The guide's figures and MAMF measure isolated GEMMs: the presets with their sustained-compute
// share set to 1 (docs/fidelity.md "Sustained compute").
GpuSpec gpu(const char* name) {
  const GpuSpec* g = find_gpu(name);
  if (g == nullptr) throw std::runtime_error(std::string("no GPU preset ") + name);
  GpuSpec isolated = *g;
  isolated.sustained_compute_fraction = 1.0;
  return isolated;
}

constexpr GemmTile k256x128{256, 128, 1, 1.0};

double tflops(const GemmShape& s, const GemmEstimate& e) {
  return 2.0 * static_cast<double>(s.m * s.n * s.k * s.batch) / e.seconds / T;
}

// Guide §3.2: "an NVIDIA A100 GPU has 108 SMs; in the particular case of 256x128 thread block
// tiles, it can execute one thread block per SM, leading to a wave size of 108 tiles". 108 tiles
// make one full wave; 109 need a second wave that is 1/108 full: 109 / 216 = 50.5 %.
TEST(GemmModel, WaveQuantizationOnA100) {
  const GpuSpec a100 = gpu("A100-SXM4-80GB");
  ASSERT_EQ(a100.sm_count, 108);
  const GemmShape full{108 * 256, 128, 4096, 1, Precision::bf16};
  const GemmShape one_more{109 * 256, 128, 4096, 1, Precision::bf16};
  const GemmEstimate e108 = estimate_gemm(full, a100, k256x128, 1);
  const GemmEstimate e109 = estimate_gemm(one_more, a100, k256x128, 1);
  EXPECT_EQ(e108.ctas, 108u);
  EXPECT_DOUBLE_EQ(e108.waves, 1.0);
  EXPECT_DOUBLE_EQ(e108.wave_efficiency, 1.0);
  EXPECT_EQ(e109.ctas, 109u);
  EXPECT_DOUBLE_EQ(e109.waves, 2.0);
  EXPECT_NEAR(e109.wave_efficiency, 109.0 / 216.0, 1e-12);
  EXPECT_NEAR(e109.wave_efficiency, 0.505, 0.001);
  // Two waves take twice as long as one; the efficiency falls to 109/216 of the full wave's.
  EXPECT_NEAR(e109.compute_seconds / e108.compute_seconds, 2.0, 1e-12);
  const double flops_ratio = 109.0 / 108.0;
  EXPECT_NEAR(flops_ratio * e108.compute_seconds / e109.compute_seconds, 109.0 / 216.0, 1e-9);
  // The heuristic escapes the half-empty wave with another tile, as cuBLAS does.
  EXPECT_GT(estimate_gemm(one_more, a100).efficiency, e109.efficiency);
}

// Guide §3.2's example: M = 2304, K = 4096, N varied, 256×128 tiles: utilization is highest when
// the tile count is a multiple of 108 or just below. 2304/256 = 9 tile rows; N = 1536 gives
// 9 × 12 = 108 tiles, N = 1664 gives 117 (two waves).
TEST(GemmModel, GuideWaveExampleM2304K4096) {
  const GpuSpec a100 = gpu("A100-SXM4-80GB");
  double best = 0;
  std::uint64_t best_n = 0;
  for (std::uint64_t n = 128; n <= 2048; n += 128) {
    const GemmShape s{2304, n, 4096, 1, Precision::bf16};
    const double tf = tflops(s, estimate_gemm(s, a100, k256x128, 1));
    if (tf > best) {
      best = tf;
      best_n = n;
    }
  }
  EXPECT_EQ(best_n, 1536u);
  const GemmShape at{2304, 1536, 4096, 1, Precision::bf16};
  const GemmShape past{2304, 1664, 4096, 1, Precision::bf16};
  const double tf_at = tflops(at, estimate_gemm(at, a100, k256x128, 1));
  const double tf_past = tflops(past, estimate_gemm(past, a100, k256x128, 1));
  // 8 % more FLOPs in twice the time (a second wave for 9 of 117 tiles).
  EXPECT_NEAR(tf_past / tf_at, (1664.0 / 1536.0) / 2.0, 1e-9);
  EXPECT_LT(tf_past, 0.6 * tf_at);
}

// A convolution's weight gradient as an implicit GEMM: ResNet-50's conv1 at batch 256 is
// m = 64 output channels, n = 3·7·7 = 147, k = 256·112·112 = 3,211,264. Its output is three 64×64
// tiles, 3 of A100's 432 slots: without splitting k the GEMM runs at 3/432 of the GPU. Splitting k
// until a wave is full (128 slices of 25,088: 384 CTAs) fills 384/432 of it, so the model must
// reach at least 0.5 × 384/432 × the 64×64 tile's ceiling, not the few per cent of 8 slices.
TEST(GemmModel, ALargeKSmallOutputGemmSplitsKUntilAWaveIsFull) {
  const GpuSpec a100 = gpu("A100-SXM4-80GB");
  const GemmShape wgrad{64, 147, 256ull * 112 * 112, 1, Precision::fp16};
  const GemmEstimate e = estimate_gemm(wgrad, a100);
  EXPECT_GE(e.split_k, 64);
  const double ceiling = gemm_ceiling(a100, Precision::fp16) * 0.65;  // the 64×64 tile's
  EXPECT_GT(e.efficiency, 0.5 * 384.0 / 432.0 * ceiling * (147.0 / 192.0));
  // Eight slices (the largest split before) fill 24 of 432 slots.
  EXPECT_GT(e.efficiency, 5.0 * estimate_gemm(wgrad, a100, {64, 64, 4, 0.65}, 8).efficiency);
}

// Guide §3.1: a 257-row output needs a third 128-row tile: 257·256 useful of 384·256 computed.
TEST(GemmModel, TileQuantization) {
  const GpuSpec a100 = gpu("A100-SXM4-80GB");
  const GemmTile t128{128, 128, 2, 0.92};
  const GemmEstimate even = estimate_gemm({256, 256, 4096, 1, Precision::bf16}, a100, t128, 1);
  const GemmEstimate odd = estimate_gemm({257, 256, 4096, 1, Precision::bf16}, a100, t128, 1);
  EXPECT_EQ(even.ctas, 4u);
  EXPECT_EQ(odd.ctas, 6u);
  EXPECT_DOUBLE_EQ(even.tile_fill, 1.0);
  EXPECT_NEAR(odd.tile_fill, 257.0 / 384.0, 1e-12);
}

// The ceiling rises with k as e_max · k / (k + k_half), and with the problem size.
TEST(GemmModel, CeilingRisesWithKAndSize) {
  const GpuSpec h100 = gpu("H100-SXM5-80GB");
  double prev = 0;
  for (std::uint64_t k : {64u, 256u, 1024u, 4096u, 16384u}) {
    const GemmEstimate e = estimate_gemm({8192, 8192, k, 1, Precision::bf16}, h100);
    EXPECT_GT(e.efficiency, prev) << "k=" << k;
    prev = e.efficiency;
  }
  const GemmEstimate forced =
      estimate_gemm({8192, 8192, 1024, 1, Precision::bf16}, h100, k256x128, 1);
  EXPECT_NEAR(forced.k_ceiling, h100.gemm_max_efficiency * 1024.0 / (1024.0 + kGemmKHalf), 1e-12);
  prev = 0;
  for (std::uint64_t mn : {256u, 1024u, 4096u, 16384u}) {
    const GemmEstimate e = estimate_gemm({mn, mn, 4096, 1, Precision::bf16}, h100);
    EXPECT_GE(e.efficiency, prev) << "m=n=" << mn;
    if (mn <= 1024) {
      EXPECT_LT(e.efficiency, 0.9 * h100.gemm_max_efficiency) << "m=n=" << mn;
    }
    prev = e.efficiency;
  }
  // Many small GEMMs in a batch run below one large GEMM of the same FLOPs.
  const GemmEstimate batched = estimate_gemm({512, 512, 128, 64, Precision::bf16}, h100);
  const GemmEstimate single = estimate_gemm({4096, 4096, 128, 1, Precision::bf16}, h100);
  EXPECT_LE(batched.efficiency, single.efficiency);
  EXPECT_LT(batched.efficiency, 0.5);
}

// Guide Table 1 (fp16): arithmetic intensity 2·M·N·K / (2·(M·K + K·N + M·N)) is 124.1 FLOPs/B for
// 8192 × 128 × 8192 and 2730.7 for 8192³.
TEST(GemmModel, ArithmeticIntensityOfGuideTable1) {
  const GpuSpec a100 = gpu("A100-SXM4-80GB");
  for (const auto& [n, ai] : {std::pair{128ull, 124.1}, std::pair{8192ull, 2730.7}}) {
    const GemmShape s{8192, n, 8192, 1, Precision::fp16};
    const GemmEstimate e = estimate_gemm(s, a100);
    const double bytes = e.memory_seconds * a100.hbm_bandwidth * a100.memory_efficiency;
    EXPECT_NEAR(2.0 * 8192.0 * static_cast<double>(n) * 8192.0 / bytes, ai, 0.05);
  }
}

// Roofline: a GEMM is memory-bound below the ridge intensity and compute-bound above. With
// m = k = 16384 and n ≪ m the intensity is ≈ n FLOPs/B; the ridge is peak·e / (BW · memory_eff).
TEST(GemmModel, MemoryBoundToComputeBoundCrossover) {
  const GpuSpec a100 = gpu("A100-SXM4-80GB");
  const double ridge = a100.peak_flops[static_cast<int>(Precision::bf16)] *
                       a100.gemm_max_efficiency /
                       (a100.hbm_bandwidth * a100.memory_efficiency);  // ≈ 173 FLOPs/B
  // GEMV: pure memory time, exactly bytes / (BW · memory_eff).
  const GemmEstimate gemv = estimate_gemm({16384, 1, 16384, 1, Precision::bf16}, a100);
  const double bytes = (16384.0 * 16384 + 16384 + 16384) * 2;
  EXPECT_DOUBLE_EQ(gemv.seconds, bytes / (a100.hbm_bandwidth * a100.memory_efficiency));
  std::uint64_t crossover = 0;
  for (std::uint64_t n = 8; n <= 2048; n += 8) {
    const GemmEstimate e = estimate_gemm({16384, n, 16384, 1, Precision::bf16}, a100);
    if (e.compute_seconds > e.memory_seconds) {
      crossover = n;
      break;
    }
  }
  ASSERT_GT(crossover, 0u);
  const double ai = 2.0 * 16384 * static_cast<double>(crossover) * 16384 /
                    ((16384.0 * 16384 + 2 * 16384.0 * static_cast<double>(crossover)) * 2);
  // Tile and wave losses raise the compute time of narrow GEMMs, so the model crosses over at
  // or below the ideal ridge, never above it.
  EXPECT_LE(ai, ridge * 1.01);
  EXPECT_GT(ai, ridge / 3);
}

// MAMF table (stas00/ml-engineering, compute/accelerator/README.md, "Maximum Achievable Matmul
// FLOPS comparison table"): BF16 v2 rows (torch 2.6/2.7) fix e_max; the older v1 rows (CUDA 12.1,
// other best shapes), the GH200 row and the FP8 row are independent checks, within 5 %.
TEST(GemmModel, ReferenceTableMamf) {
  struct Row {
    const char* gpu;
    std::uint64_t m, n, k;
    Precision p;
    double published;  // TFLOP/s
    double tolerance;
    const char* what;
  };
  const Row rows[] = {
      {"A100-SXM4-80GB", 1024, 10240, 5120, Precision::bf16, 271.2, 0.02, "A100 v2 (fit)"},
      {"H100-SXM5-80GB", 2048, 2048, 13312, Precision::bf16, 794.5, 0.02, "H100 v2 (fit)"},
      {"A100-SXM4-80GB", 6912, 2048, 16384, Precision::bf16, 267.9, 0.05, "A100 v1"},
      {"A100-SXM4-80GB", 6912, 16384, 2048, Precision::bf16, 267.9, 0.05, "A100 v1 (N, K swapped)"},
      {"H100-SXM5-80GB", 6144, 17920, 2816, Precision::bf16, 792.1, 0.05, "H100 v1"},
      {"H100-SXM5-80GB", 6144, 2816, 17920, Precision::bf16, 792.1, 0.05, "H100 v1 (N, K swapped)"},
      {"H200-SXM-141GB", 1024, 15360, 4096, Precision::bf16, 828.6, 0.05, "GH200 900 W (on H200)"},
      {"H100-SXM5-80GB", 1024, 9216, 14336, Precision::fp8, 1402.6, 0.05, "H100 FP8"},
  };
  for (const Row& r : rows) {
    const GemmShape s{r.m, r.n, r.k, 1, r.p};
    const double model = tflops(s, estimate_gemm(s, gpu(r.gpu)));
    EXPECT_NEAR(model / r.published, 1.0, r.tolerance)
        << r.what << ": model " << model << " vs published " << r.published << " TFLOP/s";
  }
}

TEST(GemmModel, MissingFiguresNameTheGpu) {
  try {
    estimate_gemm({1024, 1024, 1024, 1, Precision::bf16}, gpu("V100-SXM2-32GB"));
    FAIL() << "V100 has no bf16";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("V100-SXM2-32GB"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("bf16 peak"), std::string::npos) << e.what();
  }
  EXPECT_THROW(estimate_gemm({64, 64, 64, 1, Precision::fp8}, gpu("A100-SXM4-40GB")),
               std::invalid_argument);
  try {
    estimate_gemm({1024, 1024, 1024, 1, Precision::fp32}, gpu("cpu"));
    FAIL() << "cpu has no SM count";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("sm_count"), std::string::npos) << e.what();
  }
  EXPECT_THROW(estimate_gemm({0, 1, 1, 1, Precision::bf16}, gpu("A100-SXM4-80GB")),
               std::invalid_argument);
}

// Inside a training step a GPU sustains only a share of the isolated tensor-core rate: a
// compute-bound GEMM takes 1/share as long; its efficiency stays quoted against the datasheet.
TEST(GemmModel, SustainedComputeScalesComputeBoundTime) {
  GpuSpec a100 = gpu("A100-SXM4-80GB");
  const GemmShape big{8192, 8192, 8192, 1, Precision::bf16};
  const GemmEstimate isolated = estimate_gemm(big, a100);
  ASSERT_GT(isolated.compute_seconds, isolated.memory_seconds);
  a100.sustained_compute_fraction = 0.5;
  const GemmEstimate sustained = estimate_gemm(big, a100);
  EXPECT_NEAR(sustained.seconds / isolated.seconds, 2.0, 1e-12);
  EXPECT_NEAR(sustained.efficiency, isolated.efficiency / 2, 1e-12);
  EXPECT_DOUBLE_EQ(sustained.memory_seconds, isolated.memory_seconds);
  a100.sustained_compute_fraction = 0;
  EXPECT_THROW(estimate_gemm(big, a100), std::invalid_argument);
}

// SMs held by an overlapping collective (GpuSpec::sms_held, one per NCCL channel): waves run on
// the SMs left at the same rate per SM. On A100, 108 CTAs of 256×128 are one wave; with 8 SMs
// held they need two (100 + 8), so the GEMM takes twice as long (the "tail effect" of NVIDIA's
// forum thread 337991: a one-wave GEMM beside a 24-CTA all-gather nearly doubles). On H100's
// stream-K GEMMs the work spreads over the 108 SMs left: 264 CTAs take 264/108 waves, not 2.
TEST(GemmModel, SmsHeldByCommunicationShrinkTheWave) {
  GpuSpec a100 = gpu("A100-SXM4-80GB");
  const GemmShape one_wave{12 * 256, 9 * 128, 4096, 1, Precision::bf16};
  const GemmEstimate whole = estimate_gemm(one_wave, a100, k256x128, 1);
  ASSERT_EQ(whole.ctas, 108u);
  a100.sms_held = 8;
  const GemmEstimate held = estimate_gemm(one_wave, a100, k256x128, 1);
  EXPECT_DOUBLE_EQ(held.waves, 2.0);
  EXPECT_NEAR(held.compute_seconds / whole.compute_seconds, 2.0, 1e-12);
  EXPECT_EQ(free_sms(a100), 100);
  // cuBLAS picks the tile for the whole GPU (it cannot know what NCCL holds).
  GpuSpec a100_whole = a100;
  a100_whole.sms_held = 0;
  EXPECT_EQ(estimate_gemm(one_wave, a100).tile.tm, estimate_gemm(one_wave, a100_whole).tile.tm);
  EXPECT_EQ(estimate_gemm(one_wave, a100).tile.tn, estimate_gemm(one_wave, a100_whole).tile.tn);
  // Never fewer than one SM, whatever is held.
  a100.sms_held = 500;
  EXPECT_EQ(free_sms(a100), 1);
  EXPECT_DOUBLE_EQ(estimate_gemm(one_wave, a100, k256x128, 1).waves, 108.0);

  GpuSpec h100 = gpu("H100-SXM5-80GB");
  ASSERT_EQ(h100.sm_count, 132);
  ASSERT_TRUE(h100.gemm_stream_k);
  const GemmShape two_waves{24 * 256, 11 * 128, 4096, 1, Precision::bf16};
  const GemmEstimate h_whole = estimate_gemm(two_waves, h100, k256x128, 1);
  ASSERT_EQ(h_whole.ctas, 264u);
  h100.sms_held = 24;
  const GemmEstimate h_held = estimate_gemm(two_waves, h100, k256x128, 1);
  EXPECT_NEAR(h_held.waves, 264.0 / 108.0, 1e-12);
  EXPECT_NEAR(h_held.compute_seconds / h_whole.compute_seconds, 132.0 / 108.0, 1e-12);
}

TEST(GemmModel, PresetsCarryTheKernelFigures) {
  const std::pair<const char*, int> sms[] = {{"V100-SXM2-32GB", 80},
                                             {"A100-SXM4-40GB", 108},
                                             {"A100-SXM4-80GB", 108},
                                             {"H100-SXM5-80GB", 132},
                                             {"H200-SXM-141GB", 132},
                                             {"B200", 148},
                                             {"L40S", 142}};
  for (const auto& [name, count] : sms) {
    const GpuSpec& g = gpu(name);
    EXPECT_EQ(g.sm_count, count) << name;
    EXPECT_GT(g.gemm_max_efficiency, 0.5) << name;
    EXPECT_LT(g.gemm_max_efficiency, 1.0) << name;
    EXPECT_GT(g.attention_fwd_efficiency, 0) << name;
    EXPECT_GT(g.attention_bwd_efficiency, 0) << name;
    EXPECT_GT(g.kernel_launch_floor_s, 0) << name;
    EXPECT_GT(g.host_launch_interval_s, 0) << name;
    EXPECT_GT(find_gpu(name)->sustained_compute_fraction, 0.5) << name;
    EXPECT_LE(find_gpu(name)->sustained_compute_fraction, 1.0) << name;
  }
}

}  // namespace
}  // namespace clustersim::models::kernels
