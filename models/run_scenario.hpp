// The whole prediction for one scenario: topology, schedule, simulation, metrics. The CLI and the
// GUI both call this; neither holds logic of its own beyond presentation.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "engine/network/network_model.hpp"
#include "engine/schedule.hpp"
#include "engine/simulator.hpp"
#include "engine/timeline.hpp"
#include "engine/topology.hpp"
#include "models/metrics.hpp"
#include "models/plans/training_schedule.hpp"
#include "models/scenario.hpp"

namespace clustersim::models {

// Progress of a run: the phase ("loading", "building", "simulating", "metrics", and "writing
// trace" from write_trace) and the fraction of it done (0..1), or kUnknownFraction where the
// phase cannot tell (the set-up before building). Front ends render it; it must be cheap.
using ProgressFn = std::function<void(std::string_view phase, double fraction)>;
inline constexpr double kUnknownFraction = -1.0;
// Thrown when a run's cancel flag was set.
using Cancelled = engine::Cancelled;

struct RunOptions {
  std::optional<std::string> network;         // replaces simulation.network_model
  bool record_link_rates = false;             // for trace counters
  bool record_starts = true;                  // Timeline::start, for traces (SimulationOptions)
  ProgressFn progress;                        // may be empty
  const std::atomic<bool>* cancel = nullptr;  // checked between phases and while simulating
  // A calibration profile measured on another GPU family is an error instead of a note.
  bool strict = false;
  // Refuse, before building, a run whose estimated memory exceeds this many bytes (0: no check);
  // `max_memory_origin` words where the budget came from (models/size_estimate.hpp).
  std::int64_t max_memory = 0;
  std::string max_memory_origin = "--max-memory";
  // Simulate every rank whatever simulation.fold says (the executor replays each rank's ops).
  bool every_rank = false;
};

struct RunOutput {
  engine::Topology topology;
  BuiltSchedule built;
  engine::Timeline timeline;
  Result result;
};

engine::Topology build_topology(const Scenario& scenario);
// Simulates a loaded scenario. Front ends call models/frontend.hpp, which loads and then calls
// this.
RunOutput run_scenario(const Scenario& scenario, const RunOptions& options = {});

}  // namespace clustersim::models
