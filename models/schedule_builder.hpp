// Turns a scenario into the per-rank op graphs of the schedule IR (DESIGN.md "Data flow").
#pragma once

#include <vector>

#include "engine/schedule.hpp"
#include "models/gradient_buckets.hpp"
#include "models/model_costs.hpp"
#include "models/scenario.hpp"

namespace clustersim::models {

struct BuiltSchedule {
  engine::Schedule schedule;
  std::vector<LayerCost> layers;            // the model as costed, forward order
  std::vector<GradientBucket> buckets;      // rank 0's DDP buckets (empty without DP reduction)
  std::vector<std::vector<int>> partition;  // layer indices of each pipeline chunk
};

// Throws ScenarioError (naming the key) for plans this version cannot build.
BuiltSchedule build_schedule(const Scenario& scenario);

// FLOPs the backward pass re-spends on recomputing `layer` (per sample): the whole forward with
// full recompute, the attention core (4·s²·h) with selective recompute, nothing otherwise.
double recompute_flops(const Scenario& scenario, const LayerCost& layer);

}  // namespace clustersim::models
