// The compute half of the calibration profile (DESIGN.md "Compute model"): achieved GEMM throughput
// by problem size and precision, interpolated between measured sizes; optionally by GEMM shape
// (m, n, k, batch) and the bandwidth memory-bound kernels achieve. The compute model turns them
// into an efficiency (achieved / peak(dtype)) and an HBM share (docs/calibration.md, "Using a
// profile"; docs/fidelity.md "Calibration replaces the defaults").
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace clustersim::models {

// One measured size: a GEMM of `flops` (2·m·n·k) ran at `flops_per_s`.
struct GemmThroughput {
  double flops = 0.0;
  double flops_per_s = 0.0;
};

// One measured GEMM shape: C[m×n] = A[m×k]·B[k×n], `batch` of them, at `flops_per_s`.
struct GemmShapeThroughput {
  std::uint64_t m = 0;
  std::uint64_t n = 0;
  std::uint64_t k = 0;
  std::uint64_t batch = 1;
  double flops_per_s = 0.0;
  double flops() const {
    return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) *
           static_cast<double>(batch);
  }
};

class ComputeProfile {
 public:
  ComputeProfile() = default;
  // dtype name ("fp32", "tf32", "fp16", "bf16", "fp8") -> points; sorted by size, validated.
  explicit ComputeProfile(std::map<std::string, std::vector<GemmThroughput>> by_dtype,
                          std::map<std::string, std::vector<GemmShapeThroughput>> shapes = {},
                          double memory_bandwidth = 0.0);

  // Whether GEMMs of `dtype` were measured (by size, or by shape).
  bool has(std::string_view dtype) const;
  bool has_shapes(std::string_view dtype) const;
  bool empty() const { return by_dtype_.empty() && shapes_.empty() && memory_bandwidth_ <= 0.0; }
  const std::map<std::string, std::vector<GemmThroughput>, std::less<>>& points() const {
    return by_dtype_;
  }

  // Achieved FLOP/s of a GEMM of `flops` in `dtype`: linear in log(flops) between measured sizes,
  // the end value outside them. Throws std::out_of_range for a dtype that was not measured.
  double throughput(std::string_view dtype, double flops) const;
  // throughput / peak, capped at 1 (a measurement cannot beat the vendor's peak by much; when it
  // does the peak figure is wrong, and 1 is the honest bound).
  double efficiency(std::string_view dtype, double flops, double peak_flops_per_s) const;

  // Efficiency of the GEMM shape m×n×k (× batch) in `dtype`, capped at 1. With shapes measured in
  // `dtype`: a measured shape's own figure; otherwise the efficiencies of the (up to)
  // kShapeNeighbours nearest measured shapes, weighted by 1/d², where d is the distance in
  // (ln(m·n·k·batch), ln k): problem size sets the wave count, k the per-tile efficiency. Without
  // shapes: efficiency(dtype, 2·m·n·k·batch, peak). Throws std::out_of_range when `dtype` was not
  // measured at all.
  double gemm_efficiency(std::string_view dtype, std::uint64_t m, std::uint64_t n, std::uint64_t k,
                         std::uint64_t batch, double peak_flops_per_s) const;
  static constexpr int kShapeNeighbours = 4;

  // Bandwidth memory-bound kernels achieved (bytes/s, read + written); 0 when not measured.
  double memory_bandwidth() const { return memory_bandwidth_; }
  const std::map<std::string, std::vector<GemmShapeThroughput>, std::less<>>& shapes() const {
    return shapes_;
  }

 private:
  std::map<std::string, std::vector<GemmThroughput>, std::less<>> by_dtype_;
  std::map<std::string, std::vector<GemmShapeThroughput>, std::less<>> shapes_;
  double memory_bandwidth_ = 0.0;
};

// JSON of the profile's "fitted"."compute" object (docs/calibration.md).
nlohmann::json to_json(const ComputeProfile& profile);
// `file` only labels errors ("<file>: fitted.compute.gemm.bf16[3].flops_per_s: ...").
ComputeProfile compute_profile_from_json(const nlohmann::json& compute, const std::string& file);
// The "fitted"."compute" part of a whole profile file, read by read_calibration_profile()
// (models/calibration_profile.hpp), which checks the rest of the file too.
ComputeProfile read_compute_profile(const std::string& path);

}  // namespace clustersim::models
