// The one front-end API (DESIGN.md "Folders and layers"): every front end — the CLI, the GUI,
// the Python module, sweeps and the plan search — loads, runs and writes through these calls and
// holds nothing but presentation itself.
//
//   RunRequest req{.scenario = "s.yaml", .overrides = {"parallel.tp=4"}};
//   req.progress = [](std::string_view phase, double f) { ... };
//   const Prediction p = predict(req);                   // throws ScenarioError on bad input
//   write_result_json(p, "result.json", /*reproducible=*/true);
//   write_trace(p, "trace.json");
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/trace.hpp"
#include "engine/trace_reader.hpp"
#include "models/run_scenario.hpp"
#include "models/scenario.hpp"

namespace clustersim::models {

struct RunRequest {
  std::string scenario;                // a scenario file (names the text when given)
  std::optional<std::string> text;     // the scenario's text, read already (stdin)
  std::vector<std::string> overrides;  // "key.path=value", as --set
  std::optional<std::string> network;  // replaces simulation.network_model
  bool record_link_rates = false;      // needed for the trace's link counters
  // Each op's start, needed by write_trace and the per-op timeline; the result is the same
  // without it, 8 bytes per op lighter (engine::SimulationOptions::record_starts).
  bool record_starts = true;
  ProgressFn progress;                        // may be empty
  const std::atomic<bool>* cancel = nullptr;  // set it to stop the run (Cancelled is thrown)
  // Outputs the caller will write afterwards, as (path, flag): checked against each other and
  // every input of the scenario (its calibration profile too) once it is loaded, before the
  // simulation, so a bad output path never costs a run (OutputPathError).
  std::vector<std::pair<std::string, std::string>> outputs;
  // --strict: a calibration profile measured on another GPU family is bad input, not a note.
  bool strict = false;
  // --max-memory: as RunOptions (0: no check).
  std::int64_t max_memory = 0;
  std::string max_memory_origin = "--max-memory";
  // Every rank's ops, whatever simulation.fold says (the executor replays each rank's).
  bool every_rank = false;
};

// A scenario as loaded and what running it produced: topology, schedule, timeline, result with
// its notes.
struct Prediction {
  Scenario scenario;
  RunOutput output;
};

// Loads (ScenarioError on bad input) and runs the scenario.
Prediction predict(const RunRequest& request);

// An output path the user gave that must not be written: one of the scenario's input files, a
// directory, or a file in a folder that does not exist. Bad input (exit code 2 in the CLI).
class OutputPathError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// Checks `path` before a long run rather than after it; `flag` names it in the message. Refused:
// one of `inputs` (links followed), a directory, a socket, a file in a folder that does not
// exist, and what cannot be written (a read-only folder for a regular file, which is replaced by
// rename; a read-only device or FIFO, which is written into).
void check_output_path(const std::string& path, const std::vector<std::string>& inputs,
                       std::string_view flag);
// check_output_path for each of `outputs` (path, flag), and no two of them the same file.
void check_output_paths(const std::vector<std::pair<std::string, std::string>>& outputs,
                        const std::vector<std::string>& inputs);

// Write atomically (engine/io/atomic_file.hpp), after check_output_path.
void write_result_json(const Prediction& prediction, const std::string& path, bool reproducible);
// A path ending in .pftrace or .perfetto-trace gets Perfetto's protobuf format (models/perfetto),
// any other the Chrome trace JSON (engine/trace.hpp).
void write_trace(const Prediction& prediction, const std::string& path);
// The same, reporting phase "writing trace" with the share of its ops written, keeping what
// `filter` keeps (check_trace_filter first). A Perfetto trace is written in compressed bundles
// unless `compress` is false (docs/outputs.md "Perfetto protobuf").
void write_trace(const Prediction& prediction, const std::string& path, const ProgressFn& progress,
                 const engine::TraceFilter& filter = {}, bool compress = true);
bool is_perfetto_path(const std::string& path);
// Reads back a trace that write_trace wrote, to show a run without simulating it again: Perfetto's
// protobuf for a .pftrace or .perfetto-trace path (models/perfetto/perfetto_reader.hpp), Chrome
// trace JSON otherwise (engine/trace_reader.hpp). Reports phase "reading trace" with the share of
// the file read, and stops when `cancel` is set (Cancelled). Throws engine::TraceError naming the
// file and what is wrong: it cannot be read, or is not such a trace.
engine::TraceContents read_trace(const std::string& path, const ProgressFn& progress = {},
                                 const std::atomic<bool>* cancel = nullptr);
// Whether `path` looks like a trace rather than another JSON file (a result, a profile): a
// Perfetto extension, or "traceEvents" in its first 4 KiB. Only its beginning is read.
bool is_trace_path(const std::string& path);
// "0-7,512" -> {0, ..., 7, 512}, sorted, each once. Throws std::invalid_argument saying which
// part is not a rank or a range a-b with a <= b.
std::vector<engine::Rank> parse_rank_list(std::string_view text);
// Throws std::invalid_argument when `filter` names a rank the run does not have, or one folded
// onto another (simulation.fold), or an empty window (from > to).
void check_trace_filter(const Prediction& prediction, const engine::TraceFilter& filter);

// What write_result_json writes, as text: for front ends that keep the result in memory (the
// Python module parses it into a dict, so its keys are the result JSON's by construction).
std::string result_json_text(const Prediction& prediction, bool reproducible);

// The names of the built-in presets (`clustersim presets`), each list in the presets' order.
struct PresetNames {
  std::vector<std::string> gpus;
  std::vector<std::string> nodes;
  std::vector<std::string> models;
};
PresetNames preset_names();

}  // namespace clustersim::models
