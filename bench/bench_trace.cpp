// Trace speed (issue 15 "Traces that open at any scale", issue 12 "loading it takes no longer
// than simulating it"). BM_Trace writes a simulated run's trace to a temporary file; BM_TraceRead
// reads one back with models::read_trace, as clustersim-gui opens it. The GPT-3 175B 1,024-GPU
// scenario (15.0 M ops) and a smaller run, in both formats. Each simulation runs once, outside
// the timed loop; each read runs in a forked child (the simulation freed before), which reports
// its wall time and its peak resident memory.
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include "engine/trace.hpp"
#include "models/frontend.hpp"
#include "models/perfetto/perfetto_trace.hpp"
#include "models/run_scenario.hpp"

namespace {

using namespace clustersim;
namespace fs = std::filesystem;

// The run of one scenario at a time: the GPT-3 one holds about 2 GB.
std::unique_ptr<models::RunOutput> g_run;
std::string g_run_file;

const models::RunOutput& simulated(const std::string& file) {
  if (g_run_file != file) {
    g_run.reset();
    models::RunOptions options;
    options.network = "analytical";
    options.every_rank = true;  // every lane, as a user tracing a run sees it
    g_run = std::make_unique<models::RunOutput>(models::run_scenario(
        models::load_scenario(std::string(CLUSTERSIM_SOURCE_DIR) + "/" + file), options));
    g_run_file = file;
  }
  return *g_run;
}

fs::path temporary(const std::string& stem, bool perfetto) {
  return fs::temp_directory_path() / ("clustersim-bench-" + std::to_string(::getpid()) + "-" +
                                      stem + (perfetto ? ".pftrace" : ".json"));
}

void write(const models::RunOutput& out, const fs::path& path, bool perfetto,
           bool compress = true) {
  std::ofstream os(path, std::ios::binary);
  engine::TraceOptions options;
  options.compress = compress;
  if (perfetto)
    models::write_perfetto_trace(os, out.built.schedule, out.timeline, out.topology, options);
  else
    engine::write_trace(os, out.built.schedule, out.timeline, out.topology);
}

// `compress` applies to the .pftrace: its packets in zlib bundles (the default) or plain.
void BM_Trace(benchmark::State& state, const char* file, bool perfetto, bool compress = true) {
  const models::RunOutput& out = simulated(file);
  const fs::path path = temporary("write", perfetto);
  for (auto _ : state)
    write(out, path, perfetto, compress);
  const auto ops = static_cast<double>(out.built.schedule.ops.size());
  state.counters["ops"] = ops;
  state.counters["file_MB"] = static_cast<double>(fs::file_size(path)) / 1e6;
  state.counters["ops_per_s"] = benchmark::Counter(ops * static_cast<double>(state.iterations()),
                                                   benchmark::Counter::kIsRate);
  fs::remove(path);
}

// The traces BM_TraceRead reads, both formats written once per process from one simulation, and
// removed at its end.
struct WrittenTraces {
  std::map<std::pair<std::string, bool>, fs::path> paths;
  ~WrittenTraces() {
    for (const auto& [key, path] : paths)
      fs::remove(path);
  }
};

const fs::path& written(const std::string& file, bool perfetto) {
  static WrittenTraces traces;
  if (!traces.paths.contains({file, perfetto})) {
    for (const bool format : {true, false}) {
      const fs::path path = temporary(std::to_string(traces.paths.size()), format);
      write(simulated(file), path, format);
      traces.paths[{file, format}] = path;
    }
  }
  return traces.paths.at({file, perfetto});
}

struct ChildRead {
  double wall_s = 0.0;
  double ops = 0.0;
  double peak_rss_mb = 0.0;
  bool ok = false;
};

// Reads `path` in a forked child: its wall time, the ops read and its peak resident memory.
ChildRead read_in_child(const fs::path& path) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    double out[2] = {0.0, -1.0};
    try {
      const auto begin = std::chrono::steady_clock::now();
      const engine::TraceContents back = models::read_trace(path.string());
      out[0] = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
      out[1] = static_cast<double>(back.schedule.ops.size());
    } catch (const std::exception&) {
    }
    const ssize_t ignored = ::write(fds[1], out, sizeof out);
    (void)ignored;
    _exit(0);
  }
  close(fds[1]);
  double in[2] = {0.0, -1.0};
  const ssize_t got = read(fds[0], in, sizeof in);
  close(fds[0]);
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  ChildRead r;
  r.ok = got == static_cast<ssize_t>(sizeof in) && in[1] >= 0;
  r.wall_s = in[0];
  r.ops = in[1];
  r.peak_rss_mb = static_cast<double>(usage.ru_maxrss) / 1e3;  // kB
  return r;
}

void BM_TraceRead(benchmark::State& state, const char* file, bool perfetto) {
  const fs::path& path = written(file, perfetto);
  g_run.reset();  // the child's memory is then the read's
  g_run_file.clear();
  ChildRead r;
  for (auto _ : state) {
    r = read_in_child(path);
    if (!r.ok) {
      state.SkipWithError("the trace could not be read back");
      return;
    }
    state.SetIterationTime(r.wall_s);
  }
  state.counters["ops"] = r.ops;
  state.counters["file_MB"] = static_cast<double>(fs::file_size(path)) / 1e6;
  state.counters["ops_per_s"] = r.ops / r.wall_s;
  state.counters["peak_RSS_MB"] = r.peak_rss_mb;
}

constexpr const char* kGpt3 = "scenarios/gpt3-175b-1024xA100.yaml";
constexpr const char* kLlama = "scenarios/llama3-70b-8xdgx-h100-interleaved.yaml";

BENCHMARK_CAPTURE(BM_Trace, gpt3_175b_1024_gpus_pftrace, kGpt3, true)
    ->Unit(benchmark::kSecond)
    ->Iterations(1)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Trace, gpt3_175b_1024_gpus_pftrace_plain, kGpt3, true, false)
    ->Unit(benchmark::kSecond)
    ->Iterations(1)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Trace, llama3_70b_64_gpus_pftrace, kLlama, true)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Trace, llama3_70b_64_gpus_json, kLlama, false)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3)
    ->UseRealTime();

BENCHMARK_CAPTURE(BM_TraceRead, llama3_70b_64_gpus_pftrace, kLlama, true)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3)
    ->UseManualTime();
BENCHMARK_CAPTURE(BM_TraceRead, llama3_70b_64_gpus_json, kLlama, false)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3)
    ->UseManualTime();
BENCHMARK_CAPTURE(BM_TraceRead, gpt3_175b_1024_gpus_pftrace, kGpt3, true)
    ->Unit(benchmark::kSecond)
    ->Iterations(1)
    ->UseManualTime();
BENCHMARK_CAPTURE(BM_TraceRead, gpt3_175b_1024_gpus_json, kGpt3, false)
    ->Unit(benchmark::kSecond)
    ->Iterations(1)
    ->UseManualTime();

}  // namespace
