// Fitting: recovers α and busbw from synthetic noisy sweeps and finds a protocol breakpoint.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "calibrate/fit.hpp"
#include "engine/network/collectives.hpp"

namespace clustersim::calibrate {
namespace {

using engine::CollectiveType;

// An nccl-tests-like sweep 8 B .. 1 GiB (×2 steps) of t = α + S·factor/busbw with multiplicative
// Gaussian noise of `noise` (relative), from a fixed seed.
std::vector<SizeTime> sweep(double alpha, double busbw, double factor, double noise, unsigned seed,
                            double from = 8, double to = 1 << 30) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> gauss(0.0, noise);
  std::vector<SizeTime> out;
  for (double s = from; s <= to; s *= 2)
    out.push_back({s, (alpha + s * factor / busbw) * (1.0 + gauss(rng))});
  return out;
}

TEST(Fit, BusFactorsFollowNcclTests) {
  using engine::CollectiveType;
  EXPECT_DOUBLE_EQ(engine::bus_bandwidth_factor(CollectiveType::all_reduce, 8), 14.0 / 8.0);
  EXPECT_DOUBLE_EQ(engine::bus_bandwidth_factor(CollectiveType::all_gather, 4), 3.0 / 4.0);
  // nccl-tests scatter.cu / gather.cu: (nranks-1)/nranks, like all_gather.
  EXPECT_DOUBLE_EQ(engine::bus_bandwidth_factor(CollectiveType::scatter, 4), 3.0 / 4.0);
  EXPECT_DOUBLE_EQ(engine::bus_bandwidth_factor(CollectiveType::broadcast, 16), 1.0);
}

TEST(Fit, ExactLineIsRecoveredExactly) {
  const auto pts = sweep(25e-6, 2e11, 1.75, 0.0, 1);
  const auto r = fit_range(pts, 1.75);
  EXPECT_NEAR(r.alpha_s, 25e-6, 25e-6 * 1e-9);
  EXPECT_NEAR(r.busbw, 2e11, 2e11 * 1e-9);
  EXPECT_LT(r.rms_relative_error, 1e-9);
  EXPECT_EQ(r.min_bytes, 8);
  EXPECT_EQ(r.max_bytes, 1 << 30);
}

TEST(Fit, RecoversAlphaAndBusbwFromNoisyDataWithinTwoPercent) {
  // Several seeds, 1 % noise: an H100-node-like all-reduce (α 20 µs, busbw 150 GB/s, 8 ranks).
  for (unsigned seed = 1; seed <= 5; ++seed) {
    const auto pts = sweep(20e-6, 150e9, 1.75, 0.01, seed);
    const auto f = fit_collective(CollectiveType::all_reduce, {8, 1}, 1.75, pts);
    ASSERT_EQ(f.ranges.size(), 1u) << "noise alone must not split the range (seed " << seed << ")";
    EXPECT_NEAR(f.ranges[0].alpha_s, 20e-6, 0.02 * 20e-6) << "seed " << seed;
    EXPECT_NEAR(f.ranges[0].busbw, 150e9, 0.02 * 150e9) << "seed " << seed;
    // The fit error reports the noise: about 1 % rms.
    EXPECT_GT(f.ranges[0].rms_relative_error, 0.005);
    EXPECT_LT(f.ranges[0].rms_relative_error, 0.02);
  }
}

TEST(Fit, FindsABreakpointPlacedInTheData) {
  // Two protocols: up to 256 KiB a low-latency one (α 4 µs, 20 GB/s), from 512 KiB a bandwidth
  // one (α 30 µs, 180 GB/s); 1 % noise. The breakpoint lies between 256 KiB and 512 KiB.
  for (unsigned seed = 11; seed <= 15; ++seed) {
    auto pts = sweep(4e-6, 20e9, 1.75, 0.01, seed, 8, 262144);
    const auto large = sweep(30e-6, 180e9, 1.75, 0.01, seed + 100, 524288, 1 << 30);
    pts.insert(pts.end(), large.begin(), large.end());
    const auto f = fit_collective(CollectiveType::all_reduce, {8, 1}, 1.75, pts);
    ASSERT_EQ(f.ranges.size(), 2u) << "seed " << seed;
    EXPECT_EQ(f.ranges[0].max_bytes, 262144);
    EXPECT_EQ(f.ranges[1].min_bytes, 524288);
    EXPECT_NEAR(f.ranges[0].alpha_s, 4e-6, 0.02 * 4e-6);
    EXPECT_NEAR(f.ranges[0].busbw, 20e9, 0.02 * 20e9);
    EXPECT_NEAR(f.ranges[1].alpha_s, 30e-6, 0.02 * 30e-6);
    EXPECT_NEAR(f.ranges[1].busbw, 180e9, 0.02 * 180e9);
  }
}

TEST(Fit, LatencyOnlyDataGetsNoNegativeBandwidth) {
  std::vector<SizeTime> flat = {{8, 10e-6}, {16, 10.1e-6}, {32, 9.9e-6}, {64, 10e-6}};
  const auto r = fit_range(flat, 1.0);
  EXPECT_GT(r.busbw, 0.0);
  EXPECT_NEAR(r.alpha_s, 10e-6, 0.02 * 10e-6);
}

TEST(Fit, GroupsRowsByShapeAndPrefersOutOfPlace) {
  std::vector<CollectiveMeasurement> rows;
  // 2 ranks, all_gather: t = 5 µs + S·0.5/10 GB/s out of place; in-place rows are 10× slower and
  // must be ignored when out-of-place rows exist.
  for (double s = 1024; s <= (1 << 24); s *= 2) {
    const double t = 5e-6 + s * 0.5 / 10e9;
    rows.push_back({"all_gather", 2, 1, s, 0, "float", false, t, s / t, s / t * 0.5, 0});
    rows.push_back({"all_gather", 2, 1, s, 0, "float", true, 10 * t, s / t, s / t * 0.5, 0});
    rows.push_back({"broadcast", 4, 2, s, 0, "float", true, 2 * t, s / t, s / t, 0});
  }
  const auto prof = fit_collectives(rows);
  ASSERT_EQ(prof.fits().size(), 2u);
  const auto ag = prof.lookup(CollectiveType::all_gather, {2, 1});
  ASSERT_TRUE(ag.exact);
  EXPECT_DOUBLE_EQ(ag.fit->bus_factor, 0.5);
  EXPECT_NEAR(ag.fit->ranges[0].busbw, 10e9, 1e-6 * 10e9);
  EXPECT_NEAR(ag.fit->ranges[0].alpha_s, 5e-6, 1e-6 * 5e-6);
  // broadcast: only in-place rows, t doubled -> α 10 µs, slope 2·0.5/10 GB/s, factor 1 -> 10 GB/s.
  const auto bc = prof.lookup(CollectiveType::broadcast, {4, 2});
  EXPECT_NEAR(bc.fit->ranges[0].busbw, 10e9, 1e-6 * 10e9);
}

TEST(Fit, ComputeKeepsTheBestShapePerSize) {
  std::vector<GemmMeasurement> g = {{1024, 1024, 1024, "bf16", 1e-5},
                                    {4096, 256, 1024, "bf16", 2e-5},  // same 2mnk, slower
                                    {2048, 2048, 2048, "bf16", 4e-5}};
  const auto c = fit_compute(g);
  // 2·1024³ = 2.147e9 FLOP in 10 µs = 2.147e14 FLOP/s; 2·2048³ in 40 µs = 4.295e14 FLOP/s.
  EXPECT_NEAR(c.throughput("bf16", 2.0 * 1024 * 1024 * 1024), 2.147483648e14, 1e3);
  EXPECT_NEAR(c.throughput("bf16", 2.0 * 2048 * 2048 * 2048), 4.294967296e14, 1e3);
}

TEST(Fit, EveryMeasuredGemmIsAShapeWithItsBatch) {
  // A batched shape (a scenario's score GEMM): 16 products of 2048×2048×64 in 100 µs =
  // 2·2048²·64·16 / 1e-4 = 8.59e13 FLOP/s; the compute model then costs that shape at exactly it.
  std::vector<GemmMeasurement> g = {{1024, 1024, 1024, "bf16", 1e-5},
                                    {4096, 256, 1024, "bf16", 2e-5},
                                    {2048, 2048, 64, "bf16", 1e-4, 16}};
  const auto c = fit_compute(g);
  ASSERT_TRUE(c.has_shapes("bf16"));
  EXPECT_EQ(c.shapes().at("bf16").size(), 3u);  // the two shapes of equal size stay apart
  const double rate = 2.0 * 2048 * 2048 * 64 * 16 / 1e-4;
  EXPECT_NEAR(c.gemm_efficiency("bf16", 2048, 2048, 64, 16, 1e15), rate / 1e15, 1e-12);
  EXPECT_NEAR(c.gemm_efficiency("bf16", 4096, 256, 1024, 1, 1e15),
              2.0 * 4096 * 256 * 1024 / 2e-5 / 1e15, 1e-12);
  EXPECT_DOUBLE_EQ(c.memory_bandwidth(), 0.0);  // no device-to-device copy
  g.push_back({1, 1, 1, "bf16", 1e-5, 0});
  EXPECT_THROW((void)fit_compute(g), std::invalid_argument);  // a batch of 0
}

TEST(Fit, MemoryBandwidthIsTheBestLargeDeviceToDeviceCopy) {
  // d2d copies count bytes read + written; a 1 MiB one is too small to stream at HBM rate.
  const std::vector<CopyMeasurement> copies = {{"d2d", 1048576.0, 1e-6},
                                               {"d2d", 268435456.0, 2e-4},
                                               {"d2d", 536870912.0, 3e-4},
                                               {"h2d", 536870912.0, 1e-2}};
  const auto c = fit_compute({{1024, 1024, 1024, "bf16", 1e-5}}, copies);
  EXPECT_DOUBLE_EQ(c.memory_bandwidth(), 536870912.0 / 3e-4);
}

TEST(Fit, TooFewPointsIsAClearError) {
  std::vector<SizeTime> one = {{8, 1e-5}};
  EXPECT_THROW((void)fit_collective(CollectiveType::all_reduce, {2, 1}, 1.0, one),
               std::invalid_argument);
}

}  // namespace
}  // namespace clustersim::calibrate
