// The readable summary `clustersim run` prints on stdout.
#pragma once

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "models/metrics.hpp"
#include "models/scenario.hpp"

namespace clustersim::cli {

void print_summary(std::ostream& out, const models::Scenario& scenario,
                   const models::Result& result);
// `clustersim run --timings`: "  phases: building 214.305 ms, matching 509.118 ms, ...".
void print_phase_seconds(std::ostream& out,
                         const std::vector<std::pair<std::string, double>>& phases);

}  // namespace clustersim::cli
