// Speed of the engine and of whole scenarios (run with `cmake --build build --target bench`).
// Scenario benchmarks run first so that their peak RSS is not the synthetic DAG's.
//   BM_EngineSyntheticDag: events per second on a synthetic DAG of ~1 M ops (target >= 5 M/s).
//   BM_Resnet50Ddp1024Gpus: wall time and peak RSS of resnet50 DDP on 128 DGX-A100 (target < 1 s,
//   < 1 GB) with the flow model.
//   The large plans of issues 3 and 11 (GPT-3 175B on 1,024, 1T on 3,072, Llama 3 405B on 16,384
//   GPUs) report wall_s, events_per_s and peak_rss_MB; run one per process (docs/performance.md).
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdlib>

#include "engine/simulator.hpp"
#include "models/run_scenario.hpp"

namespace {

using namespace clustersim;

class UnitCompute : public engine::ComputeModel {
 public:
  engine::Time duration(const engine::Op&, double flops) const override {
    return engine::Time::from_ps(1'000'000 + static_cast<std::int64_t>(flops));
  }
};

// 64 ranks x 16,384 ops: per rank a compute chain on stream 0 with a copy stream fed every
// fourth op, and an all-reduce over all ranks every 256 ops (ideal network).
engine::Schedule synthetic_dag(std::uint32_t ranks, std::uint32_t ops_per_rank) {
  engine::ScheduleBuilder b(ranks);
  const auto s0 = b.stream("compute");
  const auto s1 = b.stream("copy");
  std::vector<engine::Rank> all(ranks);
  for (std::uint32_t r = 0; r < ranks; ++r)
    all[r] = r;
  const auto g = b.add_group(all, "all");
  for (std::uint32_t r = 0; r < ranks; ++r) {
    engine::OpId prev = engine::kNone;
    for (std::uint32_t i = 0; i < ops_per_rank; ++i) {
      const std::span<const engine::OpId> deps =
          prev == engine::kNone ? std::span<const engine::OpId>{} : std::span(&prev, 1);
      if (i % 256 == 255) {
        prev = b.collective({r, s0, engine::Category::dp_comm, "ar", engine::kNone, deps},
                            engine::CollectiveType::all_reduce, g, 1 << 20);
      } else if (i % 4 == 3) {
        prev = b.copy({r, s1, engine::Category::forward, "copy", engine::kNone, deps}, 4096);
      } else {
        prev = b.compute({r, s0, engine::Category::forward, "op", engine::kNone, deps},
                         static_cast<double>((i * 7919u) % 1000), 0);
      }
    }
  }
  return std::move(b).finish();
}

engine::Topology switch_of(std::uint32_t gpus) {
  engine::ClusterTopologySpec spec;
  spec.nodes = static_cast<int>(gpus / 8);
  return engine::build_cluster_topology(spec);
}

double peak_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) * 1024.0;
}

void BM_Scenario(benchmark::State& state, const std::string& file,
                 const std::vector<std::string>& overrides) {
  const auto scenario =
      models::load_scenario(std::string(CLUSTERSIM_SOURCE_DIR) + "/" + file, overrides);
  double events = 0;
  std::size_t ops = 0;
  double wall_s = 0;
  int replicas = 1;  // data-parallel replicas each simulated rank stood for (1: every rank)
  models::RunOptions plain;
  plain.record_starts = false;  // as `clustersim run` without --trace
  for (auto _ : state) {
    const auto begin = std::chrono::steady_clock::now();
    const auto out = models::run_scenario(scenario, plain);
    wall_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    events = static_cast<double>(out.result.events);
    ops = out.built.schedule.ops.size();
    replicas = out.built.folded_replicas;
    benchmark::DoNotOptimize(out.result.iteration_time_s);
  }
  // Per prediction: wall time of the whole run_scenario (topology, schedule, simulation,
  // metrics) and events per second of that wall time (issue 11's figures).
  const double runs = static_cast<double>(state.iterations());
  state.counters["events"] = events;
  state.counters["ops"] = static_cast<double>(ops);
  state.counters["folded_replicas"] = replicas;
  state.counters["wall_s"] = wall_s / runs;
  state.counters["events_per_s"] = events * runs / wall_s;
  state.counters["peak_rss_MB"] = peak_rss_bytes() / 1e6;
}
BENCHMARK_CAPTURE(
    BM_Scenario, resnet50_ddp_1024_gpus, "scenarios/resnet50-ddp-dgx-a100.yaml",
    {"cluster.nodes=128", "training.global_batch=262144",
     "cluster.network={topology: fat-tree, nic_bandwidth: 200Gb/s, nics_per_node: 8}"})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);
// Issue 3: DESIGN.md's GPT-3 175B example as `clustersim run` runs it: one of its 8 replicas
// simulated with the network's check (docs/performance.md "Folding checked by the network");
// and every op of every rank (1,024), as a run with a trace does it.
BENCHMARK_CAPTURE(BM_Scenario, gpt3_175b_1024_gpus, "scenarios/gpt3-175b-1024xA100.yaml", {})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
BENCHMARK_CAPTURE(BM_Scenario, gpt3_175b_1024_gpus_every_rank, "scenarios/gpt3-175b-1024xA100.yaml",
                  {"simulation.fold=none"})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
// The plans that need several GB run only when asked: CLUSTERSIM_BENCH_LARGE=1.
void BM_LargeScenario(benchmark::State& state, const std::string& file,
                      const std::vector<std::string>& overrides) {
  if (std::getenv("CLUSTERSIM_BENCH_LARGE") == nullptr) {
    state.SkipWithError("several GB of memory: set CLUSTERSIM_BENCH_LARGE=1 to run it");
    return;
  }
  BM_Scenario(state, file, overrides);
}
// Issue 11: Narayanan et al. 2021's 1T GPT on 3,072 A100 (TP 8 · PP 64 · DP 6, batch 3,072),
// Korthikanti's 1T case scaled out, on a non-blocking fat tree with the flow model, as a user's
// run does it by default: `fold: auto`, one replica simulated with the network's check (the
// validation file asks for the unchecked `fold: dp`; docs/performance.md "Folding checked by
// the network"). folded_replicas says whether it folded.
BENCHMARK_CAPTURE(BM_LargeScenario, gpt_1t_3072_gpus,
                  "validation/training/korthikanti-1t-full-recompute.yaml",
                  {"cluster.nodes=384", "training.global_batch=3072",
                   "cluster.network={topology: fat-tree, nic_bandwidth: 200Gb/s, nics_per_node: 8}",
                   "simulation.network_model=flow", "simulation.fold=auto"})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
// Issue 11: Llama 3 405B on 16,384 H100 (TP 8 · PP 16 · DP 128, ZeRO-1); folds with the
// network's check (docs/performance.md "Folding checked by the network").
BENCHMARK_CAPTURE(BM_LargeScenario, llama3_405b_16384_gpus, "scenarios/llama3-405b-16384xh100.yaml",
                  {})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
// Issue 4: the fine-grained MoE over InfiniBand and Llama 3 70B with FSDP + TP 8.
BENCHMARK_CAPTURE(BM_Scenario, deepseek_moe_ep16, "scenarios/deepseek-moe-16b-ep16-4xdgx-h100.yaml",
                  {})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);
BENCHMARK_CAPTURE(BM_Scenario, llama3_70b_fsdp_tp8, "scenarios/llama3-70b-fsdp-tp8-4xdgx-h100.yaml",
                  {})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

void BM_EngineSyntheticDag(benchmark::State& state) {
  const auto schedule = synthetic_dag(64, 16384);
  const auto topology = switch_of(64);
  const UnitCompute compute;
  std::uint64_t events = 0;
  for (auto _ : state) {
    auto network = engine::make_network_model("ideal", topology);
    const auto tl = engine::simulate(schedule, topology, *network, compute);
    events += tl.events;
    benchmark::DoNotOptimize(tl.makespan);
  }
  state.counters["ops"] = static_cast<double>(schedule.ops.size());
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EngineSyntheticDag)->Unit(benchmark::kMillisecond)->MinTime(2.0);

}  // namespace

BENCHMARK_MAIN();
