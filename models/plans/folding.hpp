// Folding (simulation.fold; docs/performance.md "Folding"): which rank each rank mirrors when one
// data-parallel replica is simulated for all, and whether a run folds at all. The public
// questions (replicas_provably_alike, folds_data_parallel) are declared in training_schedule.hpp.
#pragma once

#include <vector>

#include "engine/schedule.hpp"
#include "models/plans/plan_context.hpp"
#include "models/scenario.hpp"

namespace clustersim::models {

struct ReplicaMirror {
  std::vector<engine::Rank> mirror;  // per rank: the simulated rank it mirrors
  int replicas = 1;                  // how many replicas the simulated one stands for
};

// Every rank mirrors the rank of replica 0 with its tp, cp, ep and pp coordinates. Under HSDP
// (without cp or ep) a replica is one shard group (a node, by default), not one rank: each of its
// members all-reduces across the replica groups through the node's NICs, so all of them are
// simulated and every replica group keeps a simulated member.
ReplicaMirror data_parallel_mirror(const Scenario& scenario, const PlanContext& ctx);

}  // namespace clustersim::models
