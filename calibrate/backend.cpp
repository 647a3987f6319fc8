#include "calibrate/backend.hpp"

#include <cstdio>

#include "calibrate/fit.hpp"

namespace clustersim::calibrate {

Calibration calibrate(BackendFn backend, const BenchOptions& options) {
  BenchResult r = backend(options);
  Calibration c;
  c.writer = r.writer;
  c.profile.provenance = std::move(r.provenance);
  c.profile.measurements = std::move(r.measurements);
  if (c.writer) fit_profile(c.profile);
  return c;
}

void print_collective_header(std::ostream& out, std::string_view collective, std::uint32_t ranks) {
  char buf[256];
  std::snprintf(
      buf, sizeof buf,
      "# %s over %u ranks\n#%12s %12s %8s %10s %8s %8s %7s\n#%12s %12s %8s %10s %8s %8s %7s\n",
      std::string(collective).c_str(), ranks, "size", "count", "type", "time", "algbw", "busbw",
      "#wrong", "(B)", "(elements)", "", "(us)", "(GB/s)", "(GB/s)", "");
  out << buf;
}

void print_collective_row(std::ostream& out, const CollectiveMeasurement& m) {
  char buf[160];
  const std::string wrong = m.wrong < 0 ? "N/A" : std::to_string(m.wrong);
  std::snprintf(buf, sizeof buf, " %12.0f %12llu %8s %10.2f %8.2f %8.2f %7s\n", m.bytes,
                static_cast<unsigned long long>(m.count), m.dtype.c_str(), m.seconds * 1e6,
                m.algbw / 1e9, m.busbw / 1e9, wrong.c_str());
  out << buf;
}

}  // namespace clustersim::calibrate
