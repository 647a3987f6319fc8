#pragma once
// What to change when a plan does not fit: each axis (recompute, micro-batch, ZeRO stage, optimizer
// offload, tp, pp) tried alone, and, when no single change fits, the fewest changes that fit
// together. Every figure is the memory model run again on a changed copy of the scenario.

#include <vector>

#include "models/memory_model.hpp"
#include "models/scenario.hpp"

namespace clustersim::models {

// Per axis, cheapest first: the first step along it that fits, or the closest when none does.
std::vector<MemorySuggestion> memory_suggestions(const Scenario& scenario);

// Changes on up to three axes at once that make the plan fit, each the cheapest step along its
// axis that does with the others, the fastest by the plan search's estimate; nullopt when none
// fits.
std::optional<MemoryCombination> memory_combination(const Scenario& scenario);

}  // namespace clustersim::models
