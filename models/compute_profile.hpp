// The compute half of the calibration profile (DESIGN.md "Compute model"): achieved GEMM throughput
// by problem size and precision, interpolated between measured sizes. The roofline compute model
// turns it into an efficiency: achieved / peak(dtype).
#pragma once

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

class ComputeProfile {
 public:
  ComputeProfile() = default;
  // dtype name ("fp32", "tf32", "fp16", "bf16", "fp8") -> points; sorted by size, validated.
  explicit ComputeProfile(std::map<std::string, std::vector<GemmThroughput>> by_dtype);

  bool has(std::string_view dtype) const;
  bool empty() const { return by_dtype_.empty(); }
  const std::map<std::string, std::vector<GemmThroughput>, std::less<>>& points() const {
    return by_dtype_;
  }

  // Achieved FLOP/s of a GEMM of `flops` in `dtype`: linear in log(flops) between measured sizes,
  // the end value outside them. Throws std::out_of_range for a dtype that was not measured.
  double throughput(std::string_view dtype, double flops) const;
  // throughput / peak, capped at 1 (a measurement cannot beat the vendor's peak by much; when it
  // does the peak figure is wrong, and 1 is the honest bound).
  double efficiency(std::string_view dtype, double flops, double peak_flops_per_s) const;

 private:
  std::map<std::string, std::vector<GemmThroughput>, std::less<>> by_dtype_;
};

// JSON of the profile's "fitted"."compute" object (docs/calibration.md).
nlohmann::json to_json(const ComputeProfile& profile);
// `file` only labels errors ("<file>: fitted.compute.gemm.bf16[3].flops_per_s: ...").
ComputeProfile compute_profile_from_json(const nlohmann::json& compute, const std::string& file);
// The "fitted"."compute" part of a whole profile file, read by read_calibration_profile()
// (models/calibration_profile.hpp), which checks the rest of the file too.
ComputeProfile read_compute_profile(const std::string& path);

}  // namespace clustersim::models
