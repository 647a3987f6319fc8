// The plan of issue 11's ring benchmark, shared by bench_ring.cpp and bench_network_models.cpp:
// one ring all-reduce over `nodes` single-GPU nodes (one NIC each) on a fat tree of 16 spines.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/compute_model.hpp"
#include "engine/schedule.hpp"
#include "engine/topology_builders.hpp"

namespace clustersim::bench {

inline engine::Topology ring_topology(std::uint32_t nodes) {
  engine::ClusterTopologySpec spec;
  spec.nodes = nodes;
  spec.node.gpus = 1;
  spec.node.nics = 1;
  spec.node.gpus_per_pcie_switch = 1;
  spec.fabric.spines = 16;
  return engine::build_cluster_topology(spec);
}

inline engine::Schedule ring_schedule(std::uint32_t nodes, std::uint64_t bytes) {
  engine::ScheduleBuilder b(nodes);
  const auto stream = b.stream("comm");
  std::vector<engine::Rank> all(nodes);
  for (std::uint32_t r = 0; r < nodes; ++r)
    all[r] = r;
  const auto group = b.add_group(all, "all");
  for (std::uint32_t r = 0; r < nodes; ++r)
    b.collective({r, stream, engine::Category::dp_comm, "all_reduce"},
                 engine::CollectiveType::all_reduce, group, bytes, engine::Algorithm::ring);
  return std::move(b).finish();
}

// The ring has no compute: every op is a transfer.
class NoCompute : public engine::ComputeModel {
 public:
  engine::Time duration(const engine::Op&, double) const override { return engine::Time::zero(); }
};

}  // namespace clustersim::bench
