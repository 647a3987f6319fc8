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

ComputeProfile::ComputeProfile(std::map<std::string, std::vector<GemmThroughput>> by_dtype,
                               std::map<std::string, std::vector<GemmShapeThroughput>> shapes,
                               double memory_bandwidth)
    : memory_bandwidth_(memory_bandwidth) {
  if (memory_bandwidth < 0.0 || !std::isfinite(memory_bandwidth))
    throw ProfileError("compute profile: memory_bandwidth must be a positive number");
  for (auto& [dtype, pts] : shapes) {
    if (!known_dtype(dtype))
      throw ProfileError("compute profile: unknown dtype '" + dtype +
                         "' (allowed: fp32, tf32, fp16, bf16, fp8)");
    if (pts.empty()) throw ProfileError("compute profile: " + dtype + " has no measured shape");
    for (const auto& p : pts)
      if (p.m == 0 || p.n == 0 || p.k == 0 || p.batch == 0 || !(p.flops_per_s > 0.0))
        throw ProfileError("compute profile: " + dtype +
                           " shapes need m, n, k, batch >= 1 and a positive flops_per_s");
    // A dtype measured only by shape still has a curve by size: the best shape of each size.
    if (!by_dtype.contains(dtype)) {
      std::map<double, double> best;
      for (const auto& p : pts)
        best[p.flops()] = std::max(best[p.flops()], p.flops_per_s);
      for (const auto& [f, r] : best)
        by_dtype[dtype].push_back({f, r});
    }
    shapes_.emplace(dtype, std::move(pts));
  }
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
  return by_dtype_.contains(dtype) || shapes_.contains(dtype);
}

bool ComputeProfile::has_shapes(std::string_view dtype) const {
  return shapes_.contains(dtype);
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

double ComputeProfile::gemm_efficiency(std::string_view dtype, std::uint64_t m, std::uint64_t n,
                                       std::uint64_t k, std::uint64_t batch,
                                       double peak_flops_per_s) const {
  if (!(peak_flops_per_s > 0.0))
    throw std::invalid_argument("efficiency needs a positive peak FLOP/s");
  const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) *
                       static_cast<double>(k) * static_cast<double>(batch);
  const auto it = shapes_.find(dtype);
  if (it == shapes_.end()) return efficiency(dtype, flops, peak_flops_per_s);
  const double x = std::log(flops);
  const double y = std::log(static_cast<double>(k));
  // The nearest measured shapes by squared distance in (ln size, ln k).
  std::vector<std::pair<double, double>> near;  // (d², efficiency)
  near.reserve(it->second.size());
  for (const auto& p : it->second) {
    const double e = std::min(1.0, p.flops_per_s / peak_flops_per_s);
    if (p.m == m && p.n == n && p.k == k && p.batch == batch) return e;
    const double dx = std::log(p.flops()) - x;
    const double dy = std::log(static_cast<double>(p.k)) - y;
    near.emplace_back(dx * dx + dy * dy, e);
  }
  const auto count = std::min<std::size_t>(near.size(), kShapeNeighbours);
  std::partial_sort(near.begin(), near.begin() + static_cast<std::ptrdiff_t>(count), near.end());
  double weights = 0.0, sum = 0.0;
  for (std::size_t i = 0; i < count; ++i) {
    if (near[i].first <= 0.0) return near[i].second;  // same size and k, another aspect ratio
    const double w = 1.0 / near[i].first;
    weights += w;
    sum += w * near[i].second;
  }
  return sum / weights;
}

nlohmann::json to_json(const ComputeProfile& profile) {
  nlohmann::json gemm = nlohmann::json::object();
  for (const auto& [dtype, pts] : profile.points()) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& p : pts)
      a.push_back({{"flops", p.flops}, {"flops_per_s", p.flops_per_s}});
    gemm[dtype] = a;
  }
  nlohmann::json out = {{"gemm", gemm}};
  if (!profile.shapes().empty()) {
    nlohmann::json shapes = nlohmann::json::object();
    for (const auto& [dtype, pts] : profile.shapes()) {
      nlohmann::json a = nlohmann::json::array();
      for (const auto& p : pts)
        a.push_back({{"m", p.m},
                     {"n", p.n},
                     {"k", p.k},
                     {"batch", p.batch},
                     {"flops_per_s", p.flops_per_s}});
      shapes[dtype] = a;
    }
    out["gemm_shapes"] = shapes;
  }
  if (profile.memory_bandwidth() > 0.0) out["memory_bandwidth"] = profile.memory_bandwidth();
  return out;
}

ComputeProfile compute_profile_from_json(const nlohmann::json& compute, const std::string& file) {
  const JsonPath at(file, "fitted.compute");
  // `gemm` may be left out when shapes or the memory bandwidth say something.
  const bool optional_gemm =
      compute.is_object() && !compute.contains("gemm") &&
      (compute.contains("gemm_shapes") || compute.contains("memory_bandwidth"));
  static const nlohmann::json kNoGemm = nlohmann::json::object();
  const auto& gemm = optional_gemm ? kNoGemm : engine::require(compute, "gemm", at);
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
  // Optional: GEMMs by shape, and the bandwidth of memory-bound kernels.
  std::map<std::string, std::vector<GemmShapeThroughput>> shapes;
  if (compute.contains("gemm_shapes")) {
    const auto& by_shape = compute["gemm_shapes"];
    if (!by_shape.is_object()) at.key("gemm_shapes").fail("expected an object keyed by dtype");
    for (const auto& [dtype, pts] : by_shape.items()) {
      const JsonPath dat = at.key("gemm_shapes").key(dtype);
      if (!known_dtype(dtype)) dat.fail("unknown dtype (allowed: fp32, tf32, fp16, bf16, fp8)");
      if (!pts.is_array() || pts.empty()) dat.fail("expected a non-empty array");
      auto& out = shapes[dtype];
      for (std::size_t i = 0; i < pts.size(); ++i) {
        const JsonPath pat = dat.index(i);
        GemmShapeThroughput g;
        g.m = engine::require_count(pts[i], "m", pat);
        g.n = engine::require_count(pts[i], "n", pat);
        g.k = engine::require_count(pts[i], "k", pat);
        g.batch = pts[i].contains("batch") ? engine::require_count(pts[i], "batch", pat) : 1;
        for (const char* key : {"m", "n", "k", "batch"})
          if (pts[i].contains(key) && pts[i][key] == 0) pat.key(key).fail("must be >= 1");
        g.flops_per_s = engine::require_positive(pts[i], "flops_per_s", pat);
        out.push_back(g);
      }
    }
  }
  double memory_bandwidth = 0.0;
  if (compute.contains("memory_bandwidth"))
    memory_bandwidth = engine::require_positive(compute, "memory_bandwidth", at);
  try {
    return ComputeProfile(std::move(by_dtype), std::move(shapes), memory_bandwidth);
  } catch (const ProfileError& e) {
    throw ProfileError(file + ": " + e.what());
  }
}

ComputeProfile read_compute_profile(const std::string& path) {
  return read_calibration_profile(path).compute;
}

}  // namespace clustersim::models
