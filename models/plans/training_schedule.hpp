// Turns a scenario into the per-rank op graphs of the schedule IR (DESIGN.md "Data flow").
#pragma once

#include <functional>
#include <string_view>
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
  // Data-parallel replicas each simulated rank stands for (1: every rank simulated; see
  // engine::Schedule::mirror).
  int folded_replicas = 1;
  // A folded run whose simulator carried every replica's traffic and found each in step with the
  // simulated one (checks_folded_run): its figures and link loads are the whole run's.
  bool replicas_checked = false;
  // Ranks whose ops were copied from their counterpart in the first data-parallel replica or at
  // tp index 0 (build_schedule's stamp_replicas), counted once per iteration.
  std::size_t stamped_ranks = 0;
};

// One training iteration (or simulation.iterations of them) of the scenario's plan. The
// scenario must have been validated (load_scenario does it). With `fold_data_parallel`, only the
// ranks of the first data-parallel replica issue ops and every other rank mirrors the rank with
// its tp, cp, ep and pp coordinates (docs/performance.md "Folding"): every replica runs the same
// ops with the same costs, so where communication costs do not depend on other traffic the
// prediction is the unfolded one. The executor replays every rank and never folds.
// `progress`, when set, gets the share of the ranks built (0..1) as the build goes.
// `stamp_replicas`: ranks of data-parallel replicas other than the first, and ranks of tp index
// > 0, copy their counterpart's ops (replica_stamp.hpp), which gives the same schedule faster and
// holds it in less memory; false builds every rank.
BuiltSchedule build_schedule(const Scenario& scenario, bool fold_data_parallel = false,
                             const std::function<void(double)>& progress = {},
                             bool stamp_replicas = true);

// Whether every data-parallel replica provably sees links identical to replica 0's: NVSwitch
// nodes (with one NIC per GPU when there are several nodes) on one fabric switch. On a fat tree
// or rails, replicas may differ by a leaf crossing (a hop's latency) or an uneven last leaf.
bool replicas_provably_alike(const Scenario& scenario);

// Whether simulation.fold asks to fold this run under `network_model` (the scenario's, or the
// one a front end chose), when there is more than one replica to fold: `dp` always; `auto` only
// where folding is exact: a contention-free model (analytical, ideal) and replicas provably
// alike.
bool folds_data_parallel(const Scenario& scenario, std::string_view network_model);

// Whether simulation.fold: auto folds this run with the network's check where folds_data_parallel
// does not fold it: a model with contention that can run again in the same process (flow), more
// than one replica (run_scenario asks it only of runs that record no op's start: no trace). The
// simulator then carries every replica's traffic and checks that each keeps step with the simulated
// one (engine::SimulationOptions::carry_replica_images); where one does not, the run is simulated
// again with every rank (docs/performance.md "Folding checked by the network").
bool checks_folded_run(const Scenario& scenario, std::string_view network_model);

}  // namespace clustersim::models
