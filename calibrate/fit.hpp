// Fitting the profile's model to measurements (DESIGN.md "Calibration profile"): per collective and
// group shape, t(S) = α + S·factor/busbw in each size range where one protocol dominates, with the
// ranges found from the data; GEMM throughput by size for the compute model.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include "calibrate/measurements.hpp"
#include "calibrate/profile.hpp"
#include "engine/calibration/collective_profile.hpp"
#include "models/compute_profile.hpp"

namespace clustersim::calibrate {

struct SizeTime {
  double bytes = 0.0;
  double seconds = 0.0;
};

struct FitOptions {
  std::size_t max_ranges = 3;  // NCCL has three protocols: LL, LL128, Simple
  std::size_t min_points_per_range = 3;
};

// Least squares on relative error: minimizes Σ((α + S·c − t)/t)² with α ≥ 0, c ≥ 0 (c =
// factor/busbw); every size counts alike whether it takes 5 µs or 5 s.
engine::ProtocolRange fit_range(std::span<const SizeTime> points, double bus_factor);

// The best segmentation of `points` (any order; equal sizes are averaged) into at most
// max_ranges contiguous size ranges, each fitted by fit_range. For each number of ranges the
// breakpoints minimize the total squared relative error (dynamic programming over all candidate
// breakpoints); one more range is taken only when it halves the total error, so noise alone
// does not split a range.
engine::CollectiveFit fit_collective(engine::CollectiveType type, engine::GroupShape shape,
                                     double bus_factor, std::span<const SizeTime> points,
                                     const FitOptions& options = {});

// Groups measurements by (collective, ranks, nodes), uses out-of-place rows where there are any,
// and fits each group. The bus factor comes from the rows (busbw/algbw) when they carry both.
engine::CollectiveProfile fit_collectives(const std::vector<CollectiveMeasurement>& rows,
                                          const FitOptions& options = {});

// Per dtype the best throughput measured at each GEMM size (2·m·n·k·batch) and at each shape
// (m, n, k, batch); and the memory-bound bandwidth, the best device-to-device copy of at least
// 64 MiB among `copies` (0 without one).
models::ComputeProfile fit_compute(const std::vector<GemmMeasurement>& gemms,
                                   const std::vector<CopyMeasurement>& copies = {});

// Fills profile.collectives and profile.compute from profile.measurements.
void fit_profile(Profile& profile, const FitOptions& options = {});

}  // namespace clustersim::calibrate
