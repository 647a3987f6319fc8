#include "models/compute_profile.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "engine/calibration/json_fields.hpp"
#include "models/calibration_profile.hpp"

namespace clustersim::models {

using engine::JsonPath;
using engine::ProfileError;

namespace {
constexpr std::string_view kDtypes[] = {"fp32", "tf32", "fp16", "bf16", "fp8"};
bool known_dtype(std::string_view d) {
  return std::find(std::begin(kDtypes), std::end(kDtypes), d) != std::end(kDtypes);
}
}  // namespace

ComputeProfile::ComputeProfile(std::map<std::string, std::vector<GemmThroughput>> by_dtype) {
  for (auto& [dtype, pts] : by_dtype) {
    if (!known_dtype(dtype))
      throw ProfileError("compute profile: unknown dtype '" + dtype +
                         "' (allowed: fp32, tf32, fp16, bf16, fp8)");
    if (pts.empty()) throw ProfileError("compute profile: " + dtype + " has no measurement");
    std::sort(pts.begin(), pts.end(),
              [](const auto& a, const auto& b) { return a.flops < b.flops; });
    for (std::size_t i = 0; i < pts.size(); ++i) {
      if (!(pts[i].flops > 0.0) || !(pts[i].flops_per_s > 0.0))
        throw ProfileError("compute profile: " + dtype + " needs positive flops and flops_per_s");
      if (i > 0 && pts[i].flops == pts[i - 1].flops)
        throw ProfileError("compute profile: " + dtype + " has two points of the same size");
    }
    by_dtype_.emplace(dtype, std::move(pts));
  }
}

bool ComputeProfile::has(std::string_view dtype) const {
  return by_dtype_.contains(dtype);
}

double ComputeProfile::throughput(std::string_view dtype, double flops) const {
  const auto it = by_dtype_.find(dtype);
  if (it == by_dtype_.end())
    throw std::out_of_range("compute profile has no GEMM measurement in " + std::string(dtype));
  const auto& p = it->second;
  if (flops <= p.front().flops) return p.front().flops_per_s;
  if (flops >= p.back().flops) return p.back().flops_per_s;
  const auto hi = std::upper_bound(p.begin(), p.end(), flops,
                                   [](double f, const GemmThroughput& g) { return f < g.flops; });
  const auto lo = hi - 1;
  // Throughput grows roughly with log(size) until it saturates, so interpolate on log(flops).
  const double w = std::log(flops / lo->flops) / std::log(hi->flops / lo->flops);
  return lo->flops_per_s + w * (hi->flops_per_s - lo->flops_per_s);
}

double ComputeProfile::efficiency(std::string_view dtype, double flops,
                                  double peak_flops_per_s) const {
  if (!(peak_flops_per_s > 0.0))
    throw std::invalid_argument("efficiency needs a positive peak FLOP/s");
  return std::min(1.0, throughput(dtype, flops) / peak_flops_per_s);
}

nlohmann::json to_json(const ComputeProfile& profile) {
  nlohmann::json gemm = nlohmann::json::object();
  for (const auto& [dtype, pts] : profile.points()) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& p : pts)
      a.push_back({{"flops", p.flops}, {"flops_per_s", p.flops_per_s}});
    gemm[dtype] = a;
  }
  return {{"gemm", gemm}};
}

ComputeProfile compute_profile_from_json(const nlohmann::json& compute, const std::string& file) {
  const JsonPath at(file, "fitted.compute");
  const auto& gemm = engine::require(compute, "gemm", at);
  if (!gemm.is_object()) at.key("gemm").fail("expected an object keyed by dtype");
  std::map<std::string, std::vector<GemmThroughput>> by_dtype;
  for (const auto& [dtype, pts] : gemm.items()) {
    const JsonPath dat = at.key("gemm").key(dtype);
    if (!known_dtype(dtype)) dat.fail("unknown dtype (allowed: fp32, tf32, fp16, bf16, fp8)");
    if (!pts.is_array() || pts.empty()) dat.fail("expected a non-empty array");
    auto& out = by_dtype[dtype];
    for (std::size_t i = 0; i < pts.size(); ++i) {
      out.push_back({engine::require_positive(pts[i], "flops", dat.index(i)),
                     engine::require_positive(pts[i], "flops_per_s", dat.index(i))});
    }
  }
  try {
    return ComputeProfile(std::move(by_dtype));
  } catch (const ProfileError& e) {
    throw ProfileError(file + ": " + e.what());
  }
}

ComputeProfile read_compute_profile(const std::string& path) {
  return read_calibration_profile(path).compute;
}

}  // namespace clustersim::models
