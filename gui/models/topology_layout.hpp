// The cluster graph laid out by tier for the topology view: core, spine and leaf switches on top,
// then NICs, CPUs, PCIe switches, NVSwitches and GPUs at the bottom; in each tier vertices in node
// order, evenly spaced. Both directions of a cable are drawn as one line, coloured by the busier
// one.
#pragma once

#include <QString>
#include <vector>

#include "engine/topology.hpp"

namespace clustersim::gui {

inline constexpr int kNumTiers = 8;

struct PlacedVertex {
  engine::VertexId id = 0;
  int tier = 0;  // 0 (top: core switches) .. kNumTiers - 1 (bottom: GPUs)
  double x = 0;  // 0..1 across the tier
};

struct PlacedCable {
  engine::VertexId a = 0, b = 0;
  std::vector<engine::LinkId> links;  // one per direction
  double bytes = 0;                   // both directions, per iteration
  double busy_s = 0;                  // the busier direction's bytes over its bandwidth
  double utilization = 0;             // the busier direction's busy time over the iteration
};

struct TopologyLayout {
  std::vector<PlacedVertex> vertices;  // indexed by VertexId
  std::vector<PlacedCable> cables;
  std::vector<int> tier_sizes;  // vertices per tier; an empty tier takes no row
};

int tier_of(engine::VertexKind kind);
// `link_bytes`: bytes each link carried over the run, indexed by LinkId; `iteration_s` and
// `iterations` turn them into per-iteration figures.
TopologyLayout layout_topology(const engine::Topology& topology,
                               const std::vector<double>& link_bytes, double iteration_s,
                               int iterations);
// One line per cable: its ends, kind, bandwidth per direction, bytes, busy time, utilization.
QString cables_csv(const engine::Topology& topology, const TopologyLayout& layout);

}  // namespace clustersim::gui
