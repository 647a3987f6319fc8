// Human-readable figures for summaries and notes: one formatter per unit for every front end.
#pragma once

#include <string>

namespace clustersim::engine {

std::string format_bytes(double bytes);            // "29.8 GiB", "128 KiB" (binary prefixes)
std::string format_seconds(double seconds);        // "1.234 s", "12.345 ms", "4.000 us"
std::string format_rate(double bytes_per_second);  // "1.23 TB/s", "231.0 GB/s" (SI prefixes)
std::string format_number(const char* printf_format, double value);  // one value, snprintf'd

}  // namespace clustersim::engine
