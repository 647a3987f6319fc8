// The result JSON of `clustersim run --json` with DESIGN.md's fixed key names.
#pragma once

#include <nlohmann/json.hpp>

#include "models/metrics.hpp"

namespace clustersim::models {

// `reproducible`: simulator.wall_s is written as 0 so that the same input gives byte-identical
// output (wall time is the only figure that is not a function of the input).
nlohmann::ordered_json result_to_json(const Result& result, bool reproducible = false);

}  // namespace clustersim::models
