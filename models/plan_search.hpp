// Plan search (docs/plan-search.md): which parallel plan to run a model on these GPUs. Takes the
// model, cluster and training keys of a scenario, enumerates the valid plans (tp, pp, dp, ep,
// data-parallel strategy, micro-batch, schedule and virtual stages, sequence parallelism,
// recompute, bucket size), prunes those the memory model says do not fit, ranks the rest with
// the analytical estimate (models/plan_estimate.hpp) and simulates the best few with the flow
// model. The CLI's `plan`, the GUI and the Python module call this; they only present it.
#pragma once

#include <atomic>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "models/plan_estimate.hpp"
#include "models/run_scenario.hpp"
#include "models/scenario.hpp"

namespace clustersim::models {

inline constexpr int kAutoResimulateGpus = 256;

enum class PlanObjective { time, tokens_per_s, cost };
// "time" | "tokens_per_s" | "cost"; nullopt otherwise.
std::optional<PlanObjective> parse_plan_objective(std::string_view name);

struct PlanSearchOptions {
  std::optional<int> gpus;  // the world size (whole nodes); default: the scenario's
  PlanObjective objective = PlanObjective::time;
  int top = 5;          // plans reported
  int resimulate = 5;   // of those, how many the flow model re-simulates (0: none)
  unsigned jobs = 0;    // threads for the re-simulations; 0 = every core
  ProgressFn progress;  // ("searching" | "simulating", fraction)
};

struct PlanCandidate {
  Scenario scenario;  // the plan applied (parallel.*, training.micro_batch, training.recompute)
  PlanEstimate estimate;
  double memory_bytes = 0;  // the memory model's peak per GPU
  double capacity_bytes = 0;
  // Fits only without the allocator's fragmentation allowance (`run`'s "tight"): listed, since
  // it may well run, but marked, since it may not.
  bool tight = false;
  double score = 0;  // the objective's value, lower is better (cost: GPU-seconds per token)
  std::optional<Result> simulated;  // the flow model's result, for the re-simulated ones
  std::string reason;               // one line: why it beats the next plan in the list
};
// The plan as --set flags ("parallel.tp=8", ...), in a fixed order.
std::vector<std::string> plan_overrides(const Scenario& plan);
// "tp 8 · pp 4 (interleaved x2) · dp 2 · fsdp · mb 1 · sp · recompute selective"
std::string describe_plan(const Scenario& plan);

// The tutorials' decision tree, for comparison with the search: the plan and each step taken.
struct RuleOfThumb {
  std::vector<std::string> steps;
  ParallelConfig parallel;
};
RuleOfThumb rule_of_thumb(const Scenario& base, int gpus);

struct PlanSearchResult {
  int gpus = 0;
  std::size_t enumerated = 0;      // plans built
  std::size_t invalid = 0;         // refused by the scenario rules
  std::size_t does_not_fit = 0;    // pruned by the memory model
  std::size_t ranked = 0;          // estimated
  std::size_t resimulated = 0;     // of `top`, the first ones, by the flow model
  std::vector<PlanCandidate> top;  // best first
  RuleOfThumb rule;
};

// ScenarioError when --gpus is not whole nodes, or no plan is valid.
PlanSearchResult search_plans(const Scenario& base, const PlanSearchOptions& options);

// The best plan as a scenario file: `source`'s YAML with the plan's keys replaced (written
// atomically after check_output_path).
void write_plan_scenario(const Scenario& plan, const std::string& source, const std::string& path);

}  // namespace clustersim::models
