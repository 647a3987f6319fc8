#include "calibrate/fit.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <tuple>

#include "engine/calibration/json_fields.hpp"
#include "engine/network/collectives.hpp"

namespace clustersim::calibrate {

namespace {

struct LineFit {
  double alpha = 0.0;
  double slope = 0.0;  // seconds per byte
  double sse = 0.0;    // Σ relative error²
};

LineFit fit_line(std::span<const SizeTime> p) {
  const auto n = static_cast<Eigen::Index>(p.size());
  Eigen::MatrixXd a(n, 2);
  Eigen::VectorXd b = Eigen::VectorXd::Ones(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto& q = p[static_cast<std::size_t>(i)];
    a(i, 0) = 1.0 / q.seconds;
    a(i, 1) = q.bytes / q.seconds;
  }
  Eigen::Vector2d x = a.colPivHouseholderQr().solve(b);
  // Physical constraints: a negative latency or slope means the other term explains the data
  // alone; refit that one-parameter model in closed form (least squares through the origin).
  const auto one_column = [&](int col) {
    const double num = a.col(col).sum(), den = a.col(col).squaredNorm();
    return den > 0.0 ? num / den : 0.0;
  };
  if (x(0) < 0.0) x = Eigen::Vector2d(0.0, std::max(0.0, one_column(1)));
  if (x(1) < 0.0) x = Eigen::Vector2d(std::max(0.0, one_column(0)), 0.0);
  LineFit f{x(0), x(1), (a * x - b).squaredNorm()};
  return f;
}

std::vector<SizeTime> merge_equal_sizes(std::span<const SizeTime> points) {
  std::map<double, std::pair<double, int>> by_size;
  for (const auto& p : points) {
    if (!(p.seconds > 0.0) || !(p.bytes >= 0.0) || !std::isfinite(p.seconds))
      throw std::invalid_argument("fit: every point needs bytes >= 0 and a positive time");
    auto& [sum, count] = by_size[p.bytes];
    sum += p.seconds;
    ++count;
  }
  std::vector<SizeTime> out;
  for (const auto& [bytes, acc] : by_size)
    out.push_back({bytes, acc.first / acc.second});
  return out;
}

}  // namespace

engine::ProtocolRange fit_range(std::span<const SizeTime> points, double bus_factor) {
  if (points.empty()) throw std::invalid_argument("fit_range: no points");
  const LineFit f = fit_line(points);
  engine::ProtocolRange r;
  r.min_bytes = points.front().bytes;
  r.max_bytes = points.back().bytes;
  for (const auto& p : points) {
    r.min_bytes = std::min(r.min_bytes, p.bytes);
    r.max_bytes = std::max(r.max_bytes, p.bytes);
  }
  r.alpha_s = f.alpha;
  r.busbw = f.slope > 0.0 ? bus_factor / f.slope : engine::kLatencyOnlyBusbw;
  r.rms_relative_error = std::sqrt(f.sse / static_cast<double>(points.size()));
  return r;
}

engine::CollectiveFit fit_collective(engine::CollectiveType type, engine::GroupShape shape,
                                     double bus_factor, std::span<const SizeTime> raw,
                                     const FitOptions& options) {
  const std::vector<SizeTime> p = merge_equal_sizes(raw);
  const std::size_t n = p.size();
  const std::size_t min_len = std::max<std::size_t>(2, options.min_points_per_range);
  if (n < 2)
    throw std::invalid_argument(std::string(engine::to_string(type)) + " over " + shape.str() +
                                ": need at least two sizes to fit, got " + std::to_string(n));
  const std::span<const SizeTime> all(p);
  // cost[i][j]: squared relative error of one line through points i..j-1.
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> cost(n + 1, std::vector<double>(n + 1, inf));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + min_len; j <= n; ++j)
      cost[i][j] = fit_line(all.subspan(i, j - i)).sse;
  if (n < min_len) cost[0][n] = fit_line(all).sse;  // too few points to split: one range

  // best[k][j]: least error of the first j points in k ranges; cut[k][j]: where the last starts.
  const std::size_t kmax = std::max<std::size_t>(1, std::min(options.max_ranges, n / min_len));
  std::vector<std::vector<double>> best(kmax + 1, std::vector<double>(n + 1, inf));
  std::vector<std::vector<std::size_t>> cut(kmax + 1, std::vector<std::size_t>(n + 1, 0));
  best[0][0] = 0.0;
  for (std::size_t k = 1; k <= kmax; ++k)
    for (std::size_t j = 1; j <= n; ++j)
      for (std::size_t i = 0; i < j; ++i) {
        const double c = best[k - 1][i] + cost[i][j];
        if (c < best[k][j]) {
          best[k][j] = c;
          cut[k][j] = i;
        }
      }
  // One more range must at least halve the squared error: a protocol switch cuts it by orders of
  // magnitude, while splitting noise at the best of ~n candidate breakpoints rarely halves it.
  // Below 0.01 % rms there is nothing left to explain.
  const double nd = static_cast<double>(n);
  std::size_t chosen = 1;
  for (std::size_t k = 2; k <= kmax; ++k) {
    const double current = best[chosen][n];
    if (current <= nd * 1e-8 || !(best[k][n] < 0.5 * current)) break;
    chosen = k;
  }
  std::vector<std::pair<std::size_t, std::size_t>> segments;
  for (std::size_t k = chosen, j = n; k > 0; --k) {
    segments.emplace_back(cut[k][j], j);
    j = cut[k][j];
  }
  std::reverse(segments.begin(), segments.end());

  engine::CollectiveFit fit;
  fit.type = type;
  fit.shape = shape;
  fit.bus_factor = bus_factor;
  for (const auto& [i, j] : segments)
    fit.ranges.push_back(fit_range(all.subspan(i, j - i), bus_factor));
  return fit;
}

engine::CollectiveProfile fit_collectives(const std::vector<CollectiveMeasurement>& rows,
                                          const FitOptions& options) {
  using Key = std::tuple<std::string, std::uint32_t, std::uint32_t>;
  std::map<Key, std::vector<const CollectiveMeasurement*>> groups;
  for (const auto& r : rows)
    groups[{r.collective, r.ranks, r.nodes}].push_back(&r);
  std::vector<engine::CollectiveFit> fits;
  for (const auto& [key, members] : groups) {
    const auto& [name, ranks, nodes] = key;
    const auto type = engine::parse_collective_type(name);
    if (!type) throw std::invalid_argument("fit: unknown collective '" + name + "'");
    const bool any_out_of_place =
        std::any_of(members.begin(), members.end(), [](const auto* m) { return !m->in_place; });
    std::vector<SizeTime> points;
    std::vector<double> ratios;
    for (const auto* m : members) {
      if (m->in_place && any_out_of_place) continue;
      if (m->wrong > 0) continue;  // a result that failed its check measured something else
      points.push_back({m->bytes, m->seconds});
      if (m->algbw > 0.0 && m->busbw > 0.0) ratios.push_back(m->busbw / m->algbw);
    }
    // busbw/algbw as printed is rounded to two decimals; the median of many rows is robust, and
    // the formula is the fallback when the rows do not carry both.
    double factor = engine::bus_bandwidth_factor(*type, ranks);
    if (!ratios.empty()) {
      std::nth_element(ratios.begin(),
                       ratios.begin() + static_cast<std::ptrdiff_t>(ratios.size() / 2),
                       ratios.end());
      const double measured = ratios[ratios.size() / 2];
      if (std::abs(measured - factor) > 0.05 * factor) factor = measured;
    }
    // One rank moves nothing over the bus (nccl-tests prints busbw 0): there is no bandwidth to
    // fit, and the profile would refuse the fit (found by fuzzing the importer).
    if (!(factor > 0.0))
      throw std::invalid_argument(name + " over " + engine::GroupShape{ranks, nodes}.str() +
                                  ": a bus factor of 0 (one rank moves no data), nothing to fit");
    fits.push_back(fit_collective(*type, {ranks, nodes}, factor, points, options));
  }
  try {
    return engine::CollectiveProfile(std::move(fits));
  } catch (const engine::ProfileError& e) {
    // A shape no profile can hold (1 rank on 2 nodes, from a log's Rank lines) is a property of
    // the measurements, like too few sizes: a fit error (found by fuzzing the importer).
    throw std::invalid_argument(e.what());
  }
}

models::ComputeProfile fit_compute(const std::vector<GemmMeasurement>& gemms,
                                   const std::vector<CopyMeasurement>& copies) {
  using Shape = std::tuple<std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t>;
  std::map<std::string, std::map<double, double>> best;
  std::map<std::string, std::map<Shape, double>> best_shape;
  for (const auto& g : gemms) {
    if (!(g.seconds > 0.0) || g.m == 0 || g.n == 0 || g.k == 0 || g.batch == 0)
      throw std::invalid_argument("fit: GEMM " + std::to_string(g.m) + "x" + std::to_string(g.n) +
                                  "x" + std::to_string(g.k) + " (batch " + std::to_string(g.batch) +
                                  ") needs positive sizes and time");
    double& b = best[g.dtype][g.flops()];
    b = std::max(b, g.flops_per_s());
    double& s = best_shape[g.dtype][{g.m, g.n, g.k, g.batch}];
    s = std::max(s, g.flops_per_s());
  }
  std::map<std::string, std::vector<models::GemmThroughput>> out;
  for (const auto& [dtype, by_size] : best)
    for (const auto& [flops, rate] : by_size)
      out[dtype].push_back({flops, rate});
  // Every measured GEMM is also a shape: the compute model then costs a GEMM by the nearest
  // measured shapes (size and k), not by size alone (docs/calibration.md "Using a profile").
  std::map<std::string, std::vector<models::GemmShapeThroughput>> shapes;
  for (const auto& [dtype, by_shape] : best_shape)
    for (const auto& [shape, rate] : by_shape)
      shapes[dtype].push_back(
          {std::get<0>(shape), std::get<1>(shape), std::get<2>(shape), std::get<3>(shape), rate});
  // Memory-bound kernels: the best device-to-device copy (bytes read + written, as the profile's
  // memory_bandwidth counts them) of at least 64 MiB, where the copy streams at HBM rate.
  double memory_bandwidth = 0.0;
  for (const auto& c : copies)
    if (c.direction == "d2d" && c.bytes >= 64.0 * 1024 * 1024 && c.seconds > 0.0)
      memory_bandwidth = std::max(memory_bandwidth, c.bandwidth());
  return models::ComputeProfile(std::move(out), std::move(shapes), memory_bandwidth);
}

void fit_profile(Profile& profile, const FitOptions& options) {
  profile.collectives = fit_collectives(profile.measurements.collectives, options);
  profile.compute = fit_compute(profile.measurements.gemms, profile.measurements.copies);
}

}  // namespace clustersim::calibrate
