// `clustersim validate`: every validation case (a scenario carrying the figures a real run
// published, models/published.hpp) is simulated and compared with what was published
// (docs/validation.md).
#pragma once

#include <array>
#include <atomic>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/metrics.hpp"
#include "models/published.hpp"
#include "models/validation_collectives.hpp"

namespace clustersim::models {

// Where the critical rank's iteration goes, as fractions of it.
struct TimeShares {
  double compute = 0, recompute = 0, communication = 0, idle = 0;
};

struct ValidationRow {
  std::string file;    // relative to the suite's folder
  std::string name;    // the scenario's name
  std::string metric;  // the published metric
  std::string kind;    // "time" or "memory"
  std::string source;
  double published = 0;
  double simulated = 0;
  double error = 0;  // signed: (simulated − published) / published
  TimeShares shares;
  std::string failure;  // why the case could not be simulated (then simulated/error are 0)
};

struct ValidationSummary {
  int cases = 0;      // figures compared
  int failed = 0;     // figures whose case could not be simulated
  double median = 0;  // of |error| over the compared figures
  double worst = 0;
  std::string worst_row;  // "file: metric"
  // How many compared figures are within each bound of kWithinBounds (the bars of the fidelity
  // issues: 5 % and 12 % for training runs, 15 % and 25 % for collectives).
  static constexpr std::array<double, 4> kWithinBounds{0.05, 0.12, 0.15, 0.25};
  std::array<int, 4> within{};
};

struct ValidationReport {
  std::vector<ValidationRow> rows;  // in file order, then the order of the figures
  ValidationSummary time, memory;   // by the metric's kind
  // Published nccl-tests tables (validation/collectives/): bus bandwidth for messages of 1 MiB
  // and more, time below (docs/network-validation.md).
  std::vector<CollectiveCaseResult> collectives;
  ValidationSummary collectives_large, collectives_small;
};

struct ValidationOptions {
  // Called before each case with its file and (index, count).
  std::function<void(std::string_view file, int index, int count)> progress;
  const std::atomic<bool>* cancel = nullptr;
  std::optional<std::string> network;  // replaces each case's simulation.network_model
  std::vector<std::string> overrides;  // "key.path=value" applied to every case, as --set
};

// The simulated value of a published metric, in its unit (published.hpp). Memory metrics say
// what was measured, and the figure taken matches it:
//   model_state_gb                     weights + gradients + optimizer states
//   peak_memory_active_gib, max_memory_allocated_gb, peak_memory_gb   allocated tensors
//   peak_memory_reserved_gb            allocated + the allocator's fragmentation
//   nvidia_smi_used_mib                reserved + CUDA context + NCCL
double simulated_value(std::string_view metric, const Scenario& scenario, const Result& result);
double simulated_memory(std::string_view metric, const MemoryEstimate& memory);

// Runs every *.yaml under `dir` (recursively, sorted by path) that has a `published:` list.
// A case that cannot be loaded or simulated is reported with its reason, never skipped
// silently. Throws std::invalid_argument when `dir` is not a folder or holds no case.
ValidationReport run_validation(const std::string& dir, const ValidationOptions& options = {});

// The report as `clustersim validate --json` writes it (docs/outputs.md "Validation report").
nlohmann::json validation_to_json(const ValidationReport& report);

}  // namespace clustersim::models
