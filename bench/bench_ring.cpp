// Issue 11: one 1 GiB ring all-reduce over 512 single-GPU nodes on a fat tree, flow model. The
// timed part is the simulation with its set-up (rendezvous, the ring's plan and routes); the
// schedule and topology are built once. Compare with a message-level simulator's run of the same
// ring (SimGrid 3.32: 2·511 steps × 512 messages).
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <chrono>

#include "bench/ring_plan.hpp"
#include "engine/simulator.hpp"

namespace {

using namespace clustersim;

void BM_RingAllReduce512Nodes(benchmark::State& state) {
  constexpr std::uint32_t kNodes = 512;
  const engine::Topology topology = bench::ring_topology(kNodes);
  const engine::Schedule schedule = bench::ring_schedule(kNodes, std::uint64_t{1} << 30);
  const bench::NoCompute compute;
  double wall_s = 0, simulated_s = 0;
  std::uint64_t events = 0;
  for (auto _ : state) {
    const auto begin = std::chrono::steady_clock::now();
    auto network = engine::make_network_model("flow", topology);
    const auto tl = engine::simulate(schedule, topology, *network, compute);
    wall_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    events += tl.events;
    simulated_s = tl.makespan.seconds();
  }
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  state.counters["wall_s"] = wall_s / static_cast<double>(state.iterations());
  state.counters["events_per_s"] = static_cast<double>(events) / wall_s;
  state.counters["simulated_s"] = simulated_s;
  state.counters["peak_rss_MB"] = static_cast<double>(u.ru_maxrss) * 1024.0 / 1e6;
}
BENCHMARK(BM_RingAllReduce512Nodes)->Unit(benchmark::kMillisecond)->Iterations(5);

}  // namespace
