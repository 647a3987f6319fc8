// calibrate gemm-report: each measured GEMM beside the kernel model (calibrate/gemm_report.hpp).
// The model's time is the input here; what is checked is the comparison's arithmetic, worked by
// hand: efficiencies against the datasheet peak, signed errors, medians and the worst row.
#include <gtest/gtest.h>

#include <sstream>

#include "calibrate/gemm_report.hpp"
#include "models/kernels/gemm_model.hpp"

namespace clustersim::calibrate {
namespace {

const models::GpuSpec& h200() {
  const models::GpuSpec* g = models::find_gpu("H200-SXM-141GB");
  EXPECT_NE(g, nullptr);
  return *g;
}

// The isolated model's time for a large shape (sustained share 1, as gemm-report compares), far
// above the launch floor and the host's launch interval.
double model_seconds(std::uint64_t m, std::uint64_t n, std::uint64_t k, models::Precision p) {
  models::GpuSpec gpu = h200();
  gpu.sustained_compute_fraction = 1.0;
  const double t = models::kernels::estimate_gemm({m, n, k, 1, p}, gpu).seconds;
  EXPECT_GT(t, 10 * gpu.host_launch_interval_s);
  return t;
}

TEST(GemmReport, ErrorsAreTheModelsTimeAgainstTheMeasuredOne) {
  Measurements m;
  // Measured at twice, once and half the model's time: errors -50 %, 0 and +100 %.
  const double t = model_seconds(4096, 4096, 4096, models::Precision::bf16);
  m.gemms.push_back({4096, 4096, 4096, "bf16", 2 * t});
  m.gemms.push_back({4096, 4096, 4096, "bf16", t});
  m.gemms.push_back({4096, 4096, 4096, "bf16", 0.5 * t});
  // 2·8192³ FLOP in 2 ms on a 989 TFLOP/s bf16 peak... as fp16 (same peak): 0.5559.
  m.gemms.push_back({8192, 8192, 8192, "fp16", 2e-3});
  const GemmReport r = compare_gemms(m, h200());
  ASSERT_EQ(r.rows.size(), 4u);
  EXPECT_NEAR(r.rows[0].error(), 1.0 / 2.0 - 1.0, 1e-12);
  EXPECT_NEAR(r.rows[1].error(), 0.0, 1e-12);
  EXPECT_NEAR(r.rows[2].error(), 1.0, 1e-12);
  EXPECT_NEAR(r.rows[3].measured_efficiency, 2.0 * 8192.0 * 8192 * 8192 / 2e-3 / 989e12, 1e-9);
  EXPECT_NEAR(r.rows[1].measured_efficiency, r.rows[1].modelled_efficiency, 1e-12);
  ASSERT_EQ(r.summaries.size(), 2u);  // fp16 before bf16, the precisions' order
  EXPECT_EQ(r.summaries[0].dtype, "fp16");
  EXPECT_EQ(r.summaries[1].dtype, "bf16");
  EXPECT_EQ(r.summaries[1].shapes, 3u);
  EXPECT_NEAR(r.summaries[1].median_abs_error, 0.5, 1e-12);
  EXPECT_NEAR(r.summaries[1].worst_error, 1.0, 1e-12);
  EXPECT_TRUE(r.not_comparable.empty());
}

TEST(GemmReport, ADtypeThePresetCannotRunIsListedNotCompared) {
  Measurements m;
  m.gemms.push_back({4096, 4096, 4096, "fp8", 1e-4});
  m.gemms.push_back({4096, 4096, 4096, "bf16", 1e-3});
  const GemmReport r = compare_gemms(m, *models::find_gpu("A100-SXM4-80GB"));  // no fp8 peak
  ASSERT_EQ(r.rows.size(), 1u);
  ASSERT_EQ(r.not_comparable.size(), 1u);
  EXPECT_NE(r.not_comparable[0].find("no fp8 peak"), std::string::npos) << r.not_comparable[0];
  std::ostringstream out;
  print_gemm_report(out, r);
  EXPECT_NE(out.str().find("not compared: fp8"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("A100-SXM4-80GB"), std::string::npos) << out.str();
}

// A 64³ GEMM is far shorter than the host's launch interval: back-to-back calls, and the
// model, take the interval.
TEST(GemmReport, TheSmallestGemmsAreBoundByTheHostsLaunchInterval) {
  Measurements m;
  m.gemms.push_back({64, 64, 64, "bf16", 10e-6});
  const GemmReport r = compare_gemms(m, h200());
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_NEAR(r.rows[0].modelled_seconds, h200().host_launch_interval_s, 1e-15);
  EXPECT_NEAR(r.rows[0].error(), h200().host_launch_interval_s / 10e-6 - 1.0, 1e-9);
}

TEST(GemmReport, AMeasurementWithoutATimeIsRefused) {
  Measurements m;
  m.gemms.push_back({4096, 4096, 4096, "bf16", 0.0});
  EXPECT_THROW(compare_gemms(m, h200()), std::invalid_argument);
}

}  // namespace
}  // namespace clustersim::calibrate
