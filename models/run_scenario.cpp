#include "models/run_scenario.hpp"

#include <chrono>

#include "engine/simulator.hpp"
#include "models/compute_model.hpp"

namespace clustersim::models {

std::string_view to_string(engine::NetworkModelKind kind) {
  switch (kind) {
    case engine::NetworkModelKind::analytical:
      return "analytical";
    case engine::NetworkModelKind::flow:
      return "flow";
    case engine::NetworkModelKind::ideal:
      return "ideal";
  }
  return "?";
}

engine::Topology build_topology(const Scenario& sc) {
  auto spec = sc.cluster.topology;
  spec.nodes = sc.cluster.nodes;
  try {
    return engine::build_cluster_topology(spec);
  } catch (const std::invalid_argument& e) {
    sc.fail("cluster", e.what());
  }
}

RunOutput run_scenario(const Scenario& sc, const RunOptions& options) {
  const auto began = std::chrono::steady_clock::now();
  RunOutput out{build_topology(sc), build_schedule(sc), {}, {}};
  const auto kind = options.network.value_or(sc.simulation.network_model);
  auto network = engine::make_network_model(kind, out.topology);
  const RooflineComputeModel compute(sc.cluster.gpu);
  engine::SimulationOptions sim;
  sim.algorithms = sc.simulation.algorithms;
  sim.progress = options.progress;
  sim.record_link_rates = options.record_link_rates;
  out.timeline = engine::simulate(out.built.schedule, out.topology, *network, compute, sim);
  out.result = compute_metrics(sc, out.built, out.timeline, out.topology);
  out.result.network_model = std::string(to_string(kind));
  out.result.wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  return out;
}

}  // namespace clustersim::models
