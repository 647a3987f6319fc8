// Calibration replaces the kernel model's defaults (docs/fidelity.md "Calibration replaces the
// defaults"): a profile's GEMMs by shape override the GEMM efficiency model (a measured shape its
// own figure, others the inverse-square-distance mean of the nearest measured shapes in
// (ln size, ln k)), its memory-bound bandwidth overrides the HBM share. The profile is
// tests/data/calibration/kernels_h100.json: bf16 shapes 4096³ at 700, 8192³ at 800 and
// 2048×2048×512 at 400 TFLOP/s, memory kernels at 2.5 TB/s.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/calibration/json_fields.hpp"
#include "models/compute_model.hpp"
#include "models/compute_profile.hpp"
#include "models/kernels/gemm_model.hpp"
#include "models/kernels/kernel_cost.hpp"
#include "models/plans/training_schedule.hpp"
#include "models/run_scenario.hpp"
#include "models/scenario.hpp"

namespace clustersim::models {
namespace {

const std::string kProfile = CLUSTERSIM_TEST_DATA "/calibration/kernels_h100.json";
const std::string kScenario = CLUSTERSIM_TEST_DATA "/calibration/kernels_h100.yaml";
constexpr double kPeak = 989e12;  // H100 SXM dense bf16 (the preset's datasheet figure)

engine::Kernel gemm(std::uint64_t m, std::uint64_t n, std::uint64_t k, Precision p) {
  engine::Kernel g;
  g.kind = engine::KernelKind::gemm;
  g.m = m;
  g.n = n;
  g.k = k;
  g.dtype = static_cast<std::uint8_t>(p);
  g.flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  return g;
}

TEST(KernelCalibration, ProfileReadsShapesAndMemoryBandwidth) {
  const ComputeProfile p = read_compute_profile(kProfile);
  EXPECT_TRUE(p.has("bf16"));
  EXPECT_TRUE(p.has_shapes("bf16"));
  EXPECT_FALSE(p.has("fp8"));
  EXPECT_DOUBLE_EQ(p.memory_bandwidth(), 2.5e12);
  ASSERT_EQ(p.shapes().at("bf16").size(), 3u);
  EXPECT_EQ(p.shapes().at("bf16")[1].batch, 1u);  // batch defaults to 1
  // Without a size curve of its own, the shapes give one: their sizes and throughputs.
  EXPECT_DOUBLE_EQ(p.throughput("bf16", 2.0 * 4096 * 4096 * 4096), 7e14);
  // The profile writes back what it read.
  const ComputeProfile again = compute_profile_from_json(to_json(p), "again.json");
  EXPECT_DOUBLE_EQ(again.memory_bandwidth(), 2.5e12);
  EXPECT_EQ(again.shapes().at("bf16").size(), 3u);
}

TEST(KernelCalibration, MeasuredShapeTakesItsOwnEfficiency) {
  const ComputeProfile p = read_compute_profile(kProfile);
  EXPECT_DOUBLE_EQ(p.gemm_efficiency("bf16", 4096, 4096, 4096, 1, kPeak), 7e14 / kPeak);
  EXPECT_DOUBLE_EQ(p.gemm_efficiency("bf16", 8192, 8192, 8192, 1, kPeak), 8e14 / kPeak);
}

TEST(KernelCalibration, BetweenShapesTheNearestWeighByInverseSquareDistance) {
  const ComputeProfile p = read_compute_profile(kProfile);
  // 4096 × 8192 × 4096 = 2^37 (× 2 FLOPs), k = 2^12. In units of (ln 2)², the squared distances
  // in (ln size, ln k) are: 4096³ (2^36, k 2^12) 1² + 0² = 1; 8192³ (2^39, 2^13) 2² + 1² = 5;
  // 2048·2048·512 (2^31, 2^9) 6² + 3² = 45.
  const double a = 7e14 / kPeak, b = 8e14 / kPeak, c = 4e14 / kPeak;
  const double want = (a / 1 + b / 5 + c / 45) / (1.0 / 1 + 1.0 / 5 + 1.0 / 45);
  EXPECT_NEAR(p.gemm_efficiency("bf16", 4096, 8192, 4096, 1, kPeak), want, 1e-12);
}

TEST(KernelCalibration, ProfiledGemmRunsAtTheMeasuredEfficiency) {
  const ComputeProfile p = read_compute_profile(kProfile);
  const GpuSpec h100 = kernels::calibrated_gpu(*find_gpu("H100-SXM5-80GB"), &p);
  // 8192³ bf16: 2·8192³ FLOPs at the measured 800 TFLOP/s (its 402 MB through memory take far
  // less). The calibration times an isolated GEMM, so the preset's sustained share still applies.
  EXPECT_NEAR(kernels::kernel_seconds(gemm(8192, 8192, 8192, Precision::bf16), h100, &p),
              2.0 * 8192.0 * 8192 * 8192 / (8e14 * h100.sustained_compute_fraction), 1e-15);
  // No fp8 measurement: the tile/wave model stands.
  const auto fp8 = gemm(8192, 8192, 8192, Precision::fp8);
  EXPECT_DOUBLE_EQ(kernels::kernel_seconds(fp8, h100, &p),
                   kernels::gemm_seconds({8192, 8192, 8192, 1, Precision::fp8}, h100));
}

TEST(KernelCalibration, MemoryKernelsRunAtTheMeasuredBandwidth) {
  const ComputeProfile p = read_compute_profile(kProfile);
  const GpuSpec& preset = *find_gpu("H100-SXM5-80GB");
  const GpuSpec h100 = kernels::calibrated_gpu(preset, &p);
  engine::Kernel copy;
  copy.kind = engine::KernelKind::memory;
  copy.bytes = 1e9;
  copy.dtype = static_cast<std::uint8_t>(Precision::bf16);
  EXPECT_NEAR(kernels::kernel_seconds(copy, h100, &p), 1e9 / 2.5e12, 1e-15);
  EXPECT_DOUBLE_EQ(kernels::kernel_seconds(copy, preset),
                   1e9 / (preset.hbm_bandwidth * preset.memory_efficiency));
  // Without a profile, calibrated_gpu changes nothing.
  EXPECT_DOUBLE_EQ(kernels::calibrated_gpu(preset, nullptr).memory_efficiency,
                   preset.memory_efficiency);
}

TEST(KernelCalibration, ScenarioWithAProfileCostsItsListsWithIt) {
  const Scenario sc = load_scenario(kScenario);
  const ComputeProfile p = read_compute_profile(kProfile);
  const BuiltSchedule built = build_schedule(sc);
  const auto& table = built.schedule.kernels;
  const RooflineComputeModel model(sc.cluster.gpu, &p);
  const auto lists = model.kernel_list_durations(table);
  ASSERT_EQ(lists.size(), table.size());
  const GpuSpec gpu = kernels::calibrated_gpu(sc.cluster.gpu, &p);
  for (std::uint32_t i = 0; i < table.size(); ++i)
    EXPECT_EQ(lists[i],
              engine::Time::from_seconds(kernels::kernels_seconds(table.list(i), gpu, &p)));

  const RunOutput calibrated = run_scenario(sc);
  Scenario plain = sc;
  plain.simulation.calibration.clear();
  const RunOutput preset = run_scenario(plain);
  EXPECT_NE(calibrated.result.iteration_time_s, preset.result.iteration_time_s);
  bool noted = false;
  for (const auto& note : calibrated.result.notes)
    noted =
        noted || note.find("profile GEMM sweep (bf16) of kernels_h100.json") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(KernelCalibration, BadShapeEntriesNameTheirPath) {
  const nlohmann::json bad = nlohmann::json::parse(
      R"({"gemm_shapes": {"bf16": [{"m": 0, "n": 1, "k": 1, "flops_per_s": 1e12}]}})");
  try {
    compute_profile_from_json(bad, "p.json");
    FAIL();
  } catch (const engine::ProfileError& e) {
    EXPECT_NE(std::string(e.what()).find("fitted.compute.gemm_shapes.bf16[0].m"), std::string::npos)
        << e.what();
  }
  const nlohmann::json negative = nlohmann::json::parse(R"({"gemm": {}, "memory_bandwidth": -1})");
  EXPECT_THROW(compute_profile_from_json(negative, "p.json"), engine::ProfileError);
}

}  // namespace
}  // namespace clustersim::models
