// The readable summary `clustersim run` prints on stdout.
#pragma once

#include <ostream>

#include "models/metrics.hpp"
#include "models/scenario.hpp"

namespace clustersim::cli {

void print_summary(std::ostream& out, const models::Scenario& scenario,
                   const models::Result& result);

// "12.3 GiB", "45.6 ms", "1.23 TB/s": human units for the summary and tables.
std::string format_bytes(double bytes);
std::string format_seconds(double seconds);
std::string format_rate(double bytes_per_second);

}  // namespace clustersim::cli
