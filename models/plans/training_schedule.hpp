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

// One training iteration (or simulation.iterations of them) of the scenario's plan. The
// scenario must have been validated (load_scenario does it).
BuiltSchedule build_schedule(const Scenario& scenario);

}  // namespace clustersim::models
