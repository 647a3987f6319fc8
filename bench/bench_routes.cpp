// Issue 11: the route search on the 16,384-GPU fabric of scenarios/llama3-405b-16384xh100.yaml
// (2,048 DGX H100-like nodes, 8 NICs each, 32-port leaves, one spine: 47,617 vertices). Each
// iteration routes a batch of uniformly random GPU pairs (most cross two leaves and the spine) on
// a fresh copy of the topology, so every route is searched, none is a cache hit; the copy is not
// timed. A route's cost should not depend on the size of the graph (docs/performance.md).
#include <benchmark/benchmark.h>

#include <optional>
#include <random>
#include <utility>
#include <vector>

#include "engine/topology_builders.hpp"

namespace {

using namespace clustersim;

engine::Topology fabric_16k() {
  engine::ClusterTopologySpec spec;
  spec.nodes = 2048;
  spec.node.nvlink_bandwidth = engine::Bandwidth::gigabytes_per_second(450);
  spec.node.nic_bandwidth = engine::Bandwidth::gigabits_per_second(400);
  spec.fabric.kind = engine::FabricKind::fat_tree;
  spec.fabric.nics_per_leaf = 32;
  spec.fabric.spines = 1;
  return engine::build_cluster_topology(spec);
}

void BM_Routes16k(benchmark::State& state) {
  const engine::Topology fabric = fabric_16k();
  const auto pairs = static_cast<std::size_t>(state.range(0));
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<engine::EndpointId> gpu(
      0, static_cast<engine::EndpointId>(fabric.num_gpus() - 1));
  std::vector<std::pair<engine::EndpointId, engine::EndpointId>> batch(pairs);
  std::optional<engine::Topology> topology;  // outside the loop: its copy and end are not timed
  std::size_t links = 0;
  for (auto _ : state) {
    state.PauseTiming();
    topology = fabric;  // empty route caches
    for (auto& [a, b] : batch)
      a = gpu(rng), b = gpu(rng);
    state.ResumeTiming();
    for (const auto& [a, b] : batch)
      links += topology->route(a, b).size();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * pairs));
  state.counters["links_per_route"] =
      static_cast<double>(links) / static_cast<double>(state.iterations() * pairs);
  state.counters["vertices"] = static_cast<double>(fabric.num_vertices());
}
BENCHMARK(BM_Routes16k)->Arg(10'000)->Unit(benchmark::kMillisecond);

}  // namespace
