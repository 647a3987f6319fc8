// What each network model costs in wall time on the same plans (docs/network.md "Which model",
// docs/performance.md):
//   BM_Ring512/<model>: one 256 MiB ring all-reduce over 512 single-GPU nodes on a fat tree
//   (SimGrid: 2·511 steps × 512 messages).
//   BM_Llama70b64Gpus/<model>: llama3-70b on 8 DGX H100 (TP 8, PP 4 interleaved, DP 2; the
//   scenario of scenarios/, global batch cut to 16 so the simgrid run stays in seconds).
// SimGrid's engine runs once per process, so every simgrid iteration runs in a forked child that
// reports its wall time back (manual time); the other models are timed the same way for a fair
// comparison.
#include <benchmark/benchmark.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>

#include "bench/ring_plan.hpp"
#include "engine/simulator.hpp"
#include "models/run_scenario.hpp"

namespace {

using namespace clustersim;

// Runs `body` (which returns its simulated seconds) in a child; returns {wall s, simulated s}.
std::pair<double, double> timed_in_child(const std::function<double()>& body) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const auto begin = std::chrono::steady_clock::now();
    const double simulated = body();
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    const double out[2] = {wall, simulated};
    const ssize_t ignored = write(fds[1], out, sizeof out);
    (void)ignored;
    _exit(0);
  }
  close(fds[1]);
  double in[2] = {0.0, 0.0};
  const ssize_t got = read(fds[0], in, sizeof in);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (got != static_cast<ssize_t>(sizeof in)) throw std::runtime_error("benchmark child failed");
  return {in[0], in[1]};
}

void report(benchmark::State& state, const std::function<double()>& body) {
  double simulated = 0.0;
  for (auto _ : state) {
    const auto [wall, sim] = timed_in_child(body);
    state.SetIterationTime(wall);
    simulated = sim;
  }
  state.counters["simulated_s"] = simulated;
}

const char* model_name(std::int64_t i) {
  static const char* const names[] = {"analytical", "flow", "simgrid"};
  return names[i];
}

void BM_Ring512(benchmark::State& state) {
  const std::string model = model_name(state.range(0));
  state.SetLabel(model);
  constexpr std::uint32_t kNodes = 512;
  const engine::Topology topology = bench::ring_topology(kNodes);
  const engine::Schedule schedule = bench::ring_schedule(kNodes, std::uint64_t{1} << 28);
  report(state, [&] {
    const bench::NoCompute compute;
    auto network = engine::make_network_model(model, topology);
    return engine::simulate(schedule, topology, *network, compute).makespan.seconds();
  });
}

void BM_Llama70b64Gpus(benchmark::State& state) {
  const std::string model = model_name(state.range(0));
  state.SetLabel(model);
  const models::Scenario scenario = models::load_scenario(
      std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/llama3-70b-8xdgx-h100-interleaved.yaml",
      {"training.global_batch=16", "simulation.network_model=" + model});
  report(state, [&] { return models::run_scenario(scenario).result.iteration_time_s; });
}

#ifdef CLUSTERSIM_HAVE_SIMGRID
constexpr std::int64_t kModels = 3;
#else
constexpr std::int64_t kModels = 2;
#endif

BENCHMARK(BM_Ring512)
    ->DenseRange(0, kModels - 1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
BENCHMARK(BM_Llama70b64Gpus)
    ->DenseRange(0, kModels - 1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

}  // namespace
