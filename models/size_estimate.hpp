// What a scenario will cost before anything is built (issue 10, docs/scenario.md "Limits"): a
// lower bound of the schedule's ops and of the memory that building and simulating them takes,
// with the key that drives it, so that a run too large for the machine is refused up front with
// a hint instead of swapping or dying of std::bad_alloc after minutes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "models/scenario.hpp"

namespace clustersim::models {

// Memory per op while simulating (schedule, simulator state, timeline): about 150 bytes,
// docs/performance.md "Large plans".
inline constexpr std::int64_t kBytesPerOp = 150;
// Memory per flow in flight under a flow-sharing network model (the flow's state and route, its
// places in its links' lists, its share of the plan): measured 480 bytes on a 2,048-rank expert
// all-to-all (4.2 M flows, 2.17 GB peak; docs/scenario.md "Limits").
inline constexpr std::int64_t kBytesPerFlow = 480;

struct SizeEstimate {
  // Every rank runs, per iteration and micro-batch, at least one forward and one backward op for
  // each layer of its stage: world · iterations · micro-batches · 2 · layers per stage.
  std::int64_t ops = 0;
  // Flows in flight at once when every group runs its largest all-pairs collective together (an
  // expert all-to-all, or a collective forced to `direct`): simulated ranks · (group size − 1).
  // 0 under a network model without flows (analytical) or without such a collective; ring and
  // tree collectives keep a few flows per rank, negligible beside the ops.
  std::int64_t flows = 0;
  // Each op starts and ends, and so does each of those flows: 2 · (ops + flows).
  std::int64_t events = 0;
  // ops · kBytesPerOp + flows · kBytesPerFlow: a lower bound of the run's peak memory.
  std::int64_t bytes = 0;
  std::string key;  // the key that makes it large, to blame in an error
  std::string
      factors;  // "2048 ranks · 10 iteration(s) · 64 micro-batches · 2 · 34 layers per stage"
  std::string flow_key;      // the key that sets the all-pairs group ("parallel.ep"), if flows
  std::string flow_factors;  // "2048 ranks · 2047 peers (parallel.ep 2048, all_to_all direct)"
};

// From a validated scenario's counts (all bounded, so no product overflows). `folded`: only one
// data-parallel replica's ranks are simulated (build_schedule's fold_data_parallel).
// `network_model`: the model that will run (empty: the scenario's simulation.network_model).
SizeEstimate estimate_size(const Scenario& scenario, bool folded = false,
                           std::string_view network_model = {});

// Half the machine's physical memory: the default of `clustersim run --max-memory`.
std::int64_t default_memory_budget();

// A ScenarioError on the estimate's key when the estimate needs more than `max_bytes`;
// `budget` says where the budget came from ("--max-memory 8GB", "half of this machine's RAM").
void check_memory_budget(const Scenario& scenario, std::int64_t max_bytes,
                         const std::string& budget, bool folded = false,
                         std::string_view network_model = {});

}  // namespace clustersim::models
