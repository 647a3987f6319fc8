#include "engine/format.hpp"

#include <cmath>
#include <cstdio>

namespace clustersim::engine {

std::string format_number(const char* printf_format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, printf_format, value);
  return buffer;
}

std::string format_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (std::fabs(b) >= 1024.0 && u < 5) {
    b /= 1024.0;
    ++u;
  }
  return format_number("%.4g", b) + " " + units[u];
}

std::string format_seconds(double s) {
  if (s >= 1.0) return format_number("%.3f", s) + " s";
  if (s >= 1e-3) return format_number("%.3f", s * 1e3) + " ms";
  return format_number("%.3f", s * 1e6) + " us";
}

std::string format_rate(double bps) {
  if (bps >= 1e12) return format_number("%.2f", bps / 1e12) + " TB/s";
  if (bps >= 1e9) return format_number("%.1f", bps / 1e9) + " GB/s";
  return format_number("%.1f", bps / 1e6) + " MB/s";
}

}  // namespace clustersim::engine
