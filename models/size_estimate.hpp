// What a scenario will cost before anything is built (issue 10, docs/scenario.md "Limits"): a
// lower bound of the schedule's ops and of the memory that building and simulating them takes,
// with the key that drives it, so that a run too large for the machine is refused up front with
// a hint instead of swapping or dying of std::bad_alloc after minutes.
#pragma once

#include <cstdint>
#include <string>

#include "models/scenario.hpp"

namespace clustersim::models {

// Memory per op while simulating (schedule, simulator state, timeline): about 150 bytes,
// docs/performance.md "What dominates".
inline constexpr std::int64_t kBytesPerOp = 150;

struct SizeEstimate {
  // Every rank runs, per iteration and micro-batch, at least one forward and one backward op for
  // each layer of its stage: world · iterations · micro-batches · 2 · layers per stage.
  std::int64_t ops = 0;
  std::int64_t bytes = 0;  // ops · kBytesPerOp: a lower bound of the run's peak memory
  std::string key;         // the key that makes it large, to blame in an error
  std::string
      factors;  // "2048 ranks · 10 iteration(s) · 64 micro-batches · 2 · 34 layers per stage"
};

// From a validated scenario's counts (all bounded, so no product overflows). `folded`: only one
// data-parallel replica's ranks are simulated (build_schedule's fold_data_parallel).
SizeEstimate estimate_size(const Scenario& scenario, bool folded = false);

// Half the machine's physical memory: the default of `clustersim run --max-memory`.
std::int64_t default_memory_budget();

// A ScenarioError on the estimate's key when the estimate needs more than `max_bytes`;
// `budget` says where the budget came from ("--max-memory 8GB", "half of this machine's RAM").
void check_memory_budget(const Scenario& scenario, std::int64_t max_bytes,
                         const std::string& budget, bool folded = false);

}  // namespace clustersim::models
