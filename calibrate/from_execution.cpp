#include "calibrate/from_execution.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>
#include <vector>

#include "calibrate/fit.hpp"
#include "calibrate/nccl_tests_import.hpp"
#include "engine/calibration/collective_profile.hpp"
#include "engine/network/collectives.hpp"

namespace clustersim::calibrate {

namespace {

using nlohmann::json;

const json& at(const json& j, const std::string& key, const std::string& file,
               const std::string& where) {
  if (!j.is_object() || !j.contains(key))
    throw ImportError(file + ": no key '" + where + key +
                      "' (is it the --json of `clustersim execute`?)");
  return j.at(key);
}

double seconds(const json& op, const std::string& key, const std::string& file,
               const std::string& where) {
  const json& v = at(op, key, file, where);
  if (!v.is_number() || !std::isfinite(v.get<double>()))
    throw ImportError(file + ": '" + where + key + "' is " + v.dump() + "; allowed: a number");
  return v.get<double>();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The GEMM the executor's tiles amount to: m = n = 256 and k such that 2·m·n·k is the op's FLOPs
// (calibrate/host_work.hpp), so the fit's size axis is the op's FLOPs.
GemmMeasurement as_gemm(double flops, double s, const std::string& dtype) {
  constexpr std::uint64_t kTile = 256;
  const double k = std::max(1.0, std::round(flops / (2.0 * kTile * kTile)));
  return {kTile, kTile, static_cast<std::uint64_t>(k), dtype, s};
}

// Per (collective, group shape): the usual fit where the execution measured two sizes or more;
// one size (a DDP run whose buckets are all alike) cannot separate latency from bandwidth, so it
// becomes a bandwidth-only range (α = 0) through that point.
engine::CollectiveProfile fit_execution_collectives(
    const std::vector<CollectiveMeasurement>& rows) {
  std::map<std::tuple<std::string, std::uint32_t, std::uint32_t>, std::vector<SizeTime>> groups;
  for (const CollectiveMeasurement& m : rows)
    groups[{m.collective, m.ranks, m.nodes}].push_back({m.bytes, m.seconds});
  std::vector<engine::CollectiveFit> fits;
  for (const auto& [key, points] : groups) {
    const auto& [name, ranks, nodes] = key;
    const engine::CollectiveType type = *engine::parse_collective_type(name);
    const engine::GroupShape shape{ranks, nodes};
    const double factor = engine::bus_bandwidth_factor(type, ranks);
    if (points.size() >= 2) {
      fits.push_back(fit_collective(type, shape, factor, points));
      continue;
    }
    engine::CollectiveFit one;
    one.type = type;
    one.shape = shape;
    one.bus_factor = factor;
    const SizeTime& pt = points.front();
    one.ranges.push_back({pt.bytes, pt.bytes, 0.0, pt.bytes * factor / pt.seconds, 0.0});
    fits.push_back(std::move(one));
  }
  return engine::CollectiveProfile(std::move(fits));
}

}  // namespace

Profile profile_from_execution(const json& measured, const std::string& file) {
  const json& info = at(measured, "execution", file, "");
  const json& ops = at(measured, "ops", file, "");
  if (!ops.is_array()) throw ImportError(file + ": 'ops' is not a list");
  const std::string backend = at(info, "backend", file, "execution.").get<std::string>();
  const std::string dtype = at(info, "compute_dtype", file, "execution.").get<std::string>();

  std::map<double, std::vector<double>> compute;  // FLOPs -> measured seconds
  using Shape = std::tuple<std::string, std::uint32_t, std::uint32_t, double>;
  std::map<Shape, std::vector<double>> collectives;  // (type, ranks, nodes, bytes) -> seconds
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const json& op = ops[i];
    const std::string where = "ops[" + std::to_string(i) + "].";
    const std::string kind = at(op, "kind", file, where).get<std::string>();
    const double end = seconds(op, "end_s", file, where);
    if (kind == "compute") {
      const double flops = seconds(op, "flops", file, where);
      const double took = end - seconds(op, "start_s", file, where);
      if (flops > 0 && took > 0) compute[flops].push_back(took);
    } else if (kind == "collective") {
      const double took = end - seconds(op, "launch_s", file, where);
      const auto ranks = at(op, "group_ranks", file, where).get<std::uint32_t>();
      const double bytes = seconds(op, "bytes", file, where);
      if (ranks < 2 || bytes <= 0 || took <= 0) continue;  // nothing crossed a link
      collectives[{at(op, "collective", file, where).get<std::string>(), ranks,
                   at(op, "group_nodes", file, where).get<std::uint32_t>(), bytes}]
          .push_back(took);
    }
  }
  if (compute.empty() && collectives.empty())
    throw ImportError(file +
                      ": no compute op with FLOPs and no collective across ranks with a "
                      "measured time: nothing to fit");

  Profile p;
  p.provenance.backend = backend;
  p.provenance.gpu =
      backend == "mpi" ? "cpu" : at(info, "device", file, "execution.").get<std::string>();
  p.provenance.date = utc_now_iso8601();
  p.provenance.host = host_name();
  p.provenance.ranks = at(info, "ranks", file, "execution.").get<std::uint32_t>();
  p.provenance.nodes =
      std::max<std::uint32_t>(1, at(info, "hosts", file, "execution.").get<std::uint32_t>());
  p.provenance.sources = {file};
  for (const auto& [flops, times] : compute)
    p.measurements.gemms.push_back(as_gemm(flops, median(times), dtype));
  for (const auto& [shape, times] : collectives) {
    const auto& [name, ranks, nodes, bytes] = shape;
    const auto type = engine::parse_collective_type(name);
    if (!type) throw ImportError(file + ": unknown collective '" + name + "'");
    CollectiveMeasurement m;
    m.collective = name;
    m.ranks = ranks;
    m.nodes = nodes;
    m.bytes = bytes;
    m.count = static_cast<std::uint64_t>(bytes / 4);
    m.dtype = "float";
    m.seconds = median(times);
    m.algbw = bytes / m.seconds;
    m.busbw = m.algbw * engine::bus_bandwidth_factor(*type, ranks);
    m.wrong = 0;  // the executor checked every value
    p.measurements.collectives.push_back(m);
  }
  p.compute = fit_compute(p.measurements.gemms);
  p.collectives = fit_execution_collectives(p.measurements.collectives);
  return p;
}

}  // namespace clustersim::calibrate
