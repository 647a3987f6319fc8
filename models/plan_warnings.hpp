// Warnings about a plan that is legal but probably not what the user wants, for Result::notes.
#pragma once

#include <string>
#include <vector>

#include "models/scenario.hpp"

namespace clustersim::models {

// A TP group that spans nodes (its per-layer all-reduces then cross the inter-node fabric), an EP
// group that spans nodes (all-to-alls over the NICs).
std::vector<std::string> plan_warnings(const Scenario& scenario);

}  // namespace clustersim::models
