#include "models/calibration_checks.hpp"

#include <algorithm>
#include <cstdio>

namespace clustersim::models {
namespace {

std::string figure(double v) {
  char s[32];
  std::snprintf(s, sizeof s, "%.3g", v);
  return s;
}

struct Context {
  const Scenario& scenario;
  const std::string& path;
  std::string hint;  // why the figure may be there

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    scenario.fail("simulation.calibration",
                  path + ": " + key + ": " + what + ", a figure that cannot be true" + hint);
  }
};

void check_gemms(const Context& c, const ComputeProfile& compute) {
  const GpuSpec& gpu = c.scenario.cluster.gpu;
  auto check = [&](const std::string& key, const std::string& dtype, double flops_per_s) {
    const auto precision = kPrecisionNames.parse(dtype);
    if (!precision) return;
    const double peak = gpu.peak_flops[static_cast<std::size_t>(*precision)];
    if (peak > 0.0 && flops_per_s > peak)
      c.fail(key, "a GEMM at " + figure(flops_per_s) + " FLOP/s is faster than the " + gpu.name +
                      "'s " + dtype + " peak of " + figure(peak) + " FLOP/s");
  };
  for (const auto& [dtype, points] : compute.points())
    for (const GemmThroughput& p : points)
      check("fitted.compute.gemm." + dtype, dtype, p.flops_per_s);
  for (const auto& [dtype, shapes] : compute.shapes())
    for (const GemmShapeThroughput& s : shapes)
      check("fitted.compute.gemm_shapes." + dtype, dtype, s.flops_per_s);
  if (gpu.hbm_bandwidth > 0.0 && compute.memory_bandwidth() > gpu.hbm_bandwidth)
    c.fail("fitted.compute.memory_bandwidth",
           figure(compute.memory_bandwidth()) + " B/s is more than the " + gpu.name +
               "'s HBM bandwidth of " + figure(gpu.hbm_bandwidth) + " B/s");
}

void check_collectives(const Context& c, const engine::CollectiveProfile& collectives,
                       const engine::Topology& topology) {
  double fastest = 0.0;
  for (engine::LinkId l = 0; l < topology.num_links(); ++l)
    fastest = std::max(fastest, topology.link(l).bandwidth.bytes_per_second());
  if (fastest <= 0.0) return;
  const double bound = kMaxBusBandwidthOverLink * fastest;
  const auto& fits = collectives.fits();
  for (std::size_t i = 0; i < fits.size(); ++i)
    for (const engine::ProtocolRange& r : fits[i].ranges)
      // A latency-only range (what the fit writes when time does not grow with size) has no
      // bandwidth term to judge.
      if (r.busbw > bound && r.busbw != engine::kLatencyOnlyBusbw)
        c.fail("fitted.collectives", std::string(engine::to_string(fits[i].type)) + " over " +
                                         fits[i].shape.str() + " has busbw " + figure(r.busbw) +
                                         " B/s, more than " + figure(kMaxBusBandwidthOverLink) +
                                         " × the cluster's fastest link (" + figure(fastest) +
                                         " B/s)");
}

}  // namespace

void check_profile_plausible(const Scenario& scenario, const std::string& profile_path,
                             const std::string& profile_gpu, const ComputeProfile& compute,
                             const engine::CollectiveProfile& collectives,
                             const engine::Topology& topology) {
  const Context c{scenario, profile_path,
                  profile_gpu.empty() ? std::string("; allowed: figures a real run can reach")
                                      : "; allowed: figures a real run can reach (the profile "
                                        "was measured on " +
                                            profile_gpu + ")"};
  check_gemms(c, compute);
  check_collectives(c, collectives, topology);
}

}  // namespace clustersim::models
