#include "calibrate/gemm_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <stdexcept>

#include "engine/kernels.hpp"
#include "models/kernels/kernel_cost.hpp"
#include "models/statistics.hpp"

namespace clustersim::calibrate {

GemmReport compare_gemms(const Measurements& m, const models::GpuSpec& preset) {
  GemmReport report;
  report.gpu = preset.name;
  models::GpuSpec gpu = preset;
  gpu.sustained_compute_fraction = 1.0;  // the calibration timed isolated GEMMs
  gpu.sms_held = 0;
  std::map<std::string, std::string> refused;
  for (const GemmMeasurement& g : m.gemms) {
    if (!(g.seconds > 0) || g.m == 0 || g.n == 0 || g.k == 0 || g.batch == 0)
      throw std::invalid_argument("GEMM " + g.dtype + " " + std::to_string(g.m) + "x" +
                                  std::to_string(g.n) + "x" + std::to_string(g.k) +
                                  " has no time or a zero dimension");
    const auto dtype = models::parse_precision(g.dtype);
    if (!dtype) {
      refused.emplace(g.dtype, "not a dtype the model knows");
      continue;
    }
    const double peak = gpu.peak_flops[static_cast<std::size_t>(*dtype)];
    if (!(peak > 0)) {
      refused.emplace(g.dtype, "the preset has no " + g.dtype + " peak");
      continue;
    }
    // As a scenario's op of this one GEMM is costed: the kernel (with the launch floor), bound by
    // the host's launch interval, since the calibration issued the calls back to back.
    engine::Kernel kernel;
    kernel.kind = engine::KernelKind::gemm;
    kernel.m = g.m;
    kernel.n = g.n;
    kernel.k = g.k;
    kernel.batch = g.batch;
    kernel.dtype = static_cast<std::uint8_t>(*dtype);
    kernel.flops = g.flops();
    const double dm = static_cast<double>(g.m), dn = static_cast<double>(g.n),
                 dk = static_cast<double>(g.k);  // as doubles: no 64-bit product overflows
    kernel.bytes = (dm * dk + dk * dn + dm * dn) * models::stored_element_bytes(*dtype) *
                   static_cast<double>(g.batch);
    const double seconds = models::kernels::kernels_seconds({&kernel, 1}, gpu);
    report.rows.push_back({g, g.flops_per_s() / peak, g.flops() / (seconds * peak), seconds});
  }
  for (const auto& [dtype, why] : refused)
    report.not_comparable.push_back(dtype + ": " + why);
  for (const std::string& dtype : models::kPrecisionNames.names()) {
    DtypeSummary s{dtype};
    std::vector<double> errors;
    for (const GemmComparison& r : report.rows)
      if (r.measured.dtype == s.dtype) {
        errors.push_back(std::abs(r.error()));
        if (std::abs(r.error()) > std::abs(s.worst_error)) s.worst_error = r.error();
      }
    if (errors.empty()) continue;
    s.shapes = errors.size();
    s.median_abs_error = models::median(errors);
    report.summaries.push_back(s);
  }
  return report;
}

void print_gemm_report(std::ostream& out, const GemmReport& report) {
  out << "# GEMMs measured against the kernel model on " << report.gpu
      << " (isolated: sustained share 1)\n"
      << "#  dtype       m       n       k batch  measured TFLOP/s   eff  model eff    error\n";
  char buf[200];
  for (const GemmComparison& r : report.rows) {
    const GemmMeasurement& g = r.measured;
    std::snprintf(buf, sizeof buf, "  %5s %7llu %7llu %7llu %5llu %17.1f %5.3f %10.3f %+7.1f %%\n",
                  g.dtype.c_str(), static_cast<unsigned long long>(g.m),
                  static_cast<unsigned long long>(g.n), static_cast<unsigned long long>(g.k),
                  static_cast<unsigned long long>(g.batch), g.flops_per_s() / 1e12,
                  r.measured_efficiency, r.modelled_efficiency, 100.0 * r.error());
    out << buf;
  }
  out << "# error = (modelled - measured) / measured time; negative: the model is optimistic\n";
  for (const DtypeSummary& s : report.summaries) {
    std::snprintf(buf, sizeof buf, "%-5s %3zu shapes: median |error| %5.1f %%, worst %+6.1f %%\n",
                  s.dtype.c_str(), s.shapes, 100.0 * s.median_abs_error, 100.0 * s.worst_error);
    out << buf;
  }
  for (const std::string& n : report.not_comparable)
    out << "not compared: " << n << "\n";
}

}  // namespace clustersim::calibrate
