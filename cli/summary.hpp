// The readable summary `clustersim run` prints on stdout.
#pragma once

#include <ostream>

#include "models/metrics.hpp"
#include "models/scenario.hpp"

namespace clustersim::cli {

void print_summary(std::ostream& out, const models::Scenario& scenario,
                   const models::Result& result);

}  // namespace clustersim::cli
