// Trace writing speed (issue 15 "Traces that open at any scale"): the GPT-3 175B 1,024-GPU
// scenario (15.9 M ops) written as Perfetto's protobuf trace to a temporary file, and a smaller
// run in both formats. Reports wall time, the file's size and ops written per second. The
// simulation runs once, outside the timed loop.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "engine/trace.hpp"
#include "models/perfetto/perfetto_trace.hpp"
#include "models/run_scenario.hpp"

namespace {

using namespace clustersim;

const models::RunOutput& simulated(const std::string& file) {
  static std::string loaded;
  static models::RunOutput out;
  if (loaded != file) {
    models::RunOptions options;
    options.network = "analytical";
    options.every_rank = true;  // every lane, as a user tracing a run sees it
    out = models::run_scenario(
        models::load_scenario(std::string(CLUSTERSIM_SOURCE_DIR) + "/" + file), options);
    loaded = file;
  }
  return out;
}

void BM_Trace(benchmark::State& state, const char* file, bool perfetto) {
  const models::RunOutput& out = simulated(file);
  const auto path =
      std::filesystem::temp_directory_path() /
      ("clustersim-bench-" + std::to_string(::getpid()) + (perfetto ? ".pftrace" : ".json"));
  for (auto _ : state) {
    std::ofstream os(path, std::ios::binary);
    if (perfetto)
      models::write_perfetto_trace(os, out.built.schedule, out.timeline, out.topology);
    else
      engine::write_trace(os, out.built.schedule, out.timeline, out.topology);
  }
  const auto ops = static_cast<double>(out.built.schedule.ops.size());
  state.counters["ops"] = ops;
  state.counters["file_MB"] = static_cast<double>(std::filesystem::file_size(path)) / 1e6;
  state.counters["ops_per_s"] = benchmark::Counter(ops * static_cast<double>(state.iterations()),
                                                   benchmark::Counter::kIsRate);
  std::filesystem::remove(path);
}

BENCHMARK_CAPTURE(BM_Trace, gpt3_175b_1024_gpus_pftrace, "scenarios/gpt3-175b-1024xA100.yaml", true)
    ->Unit(benchmark::kSecond)
    ->Iterations(1)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Trace, llama3_70b_64_gpus_pftrace,
                  "scenarios/llama3-70b-8xdgx-h100-interleaved.yaml", true)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Trace, llama3_70b_64_gpus_json,
                  "scenarios/llama3-70b-8xdgx-h100-interleaved.yaml", false)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3)
    ->UseRealTime();

}  // namespace
