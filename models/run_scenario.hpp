// The whole prediction for one scenario: topology, schedule, simulation, metrics. The CLI and the
// GUI both call this; neither holds logic of its own beyond presentation.
#pragma once

#include <functional>
#include <optional>

#include "engine/network/network_model.hpp"
#include "engine/schedule.hpp"
#include "engine/timeline.hpp"
#include "engine/topology.hpp"
#include "models/metrics.hpp"
#include "models/scenario.hpp"
#include "models/plans/training_schedule.hpp"

namespace clustersim::models {

struct RunOptions {
  std::optional<engine::NetworkModelKind> network;  // overrides simulation.network_model
  bool record_link_rates = false;                   // for trace counters
  std::function<void(double)> progress;             // fraction of ops simulated
};

struct RunOutput {
  engine::Topology topology;
  BuiltSchedule built;
  engine::Timeline timeline;
  Result result;
};

std::string_view to_string(engine::NetworkModelKind kind);
engine::Topology build_topology(const Scenario& scenario);
RunOutput run_scenario(const Scenario& scenario, const RunOptions& options = {});

}  // namespace clustersim::models
