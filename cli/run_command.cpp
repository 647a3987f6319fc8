#include "cli/run_command.hpp"

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <tuple>

#include "cli/phase_progress.hpp"
#include "cli/summary.hpp"
#include "engine/network/network_model.hpp"
#include "models/frontend.hpp"
#include "models/size_estimate.hpp"
#include "models/units.hpp"

namespace clustersim::cli {

namespace {

struct RunArgs {
  std::string file;
  std::vector<std::string> overrides;
  std::string json_out;
  std::string trace_out;
  std::string trace_ranks;           // "0-7,512"
  std::string trace_from, trace_to;  // simulated times, e.g. "1.5s"
  std::string trace_compression = "deflate";
  std::string network;
  bool reproducible = false;
  bool strict = false;
  bool timings = false;
  std::string max_memory;  // a size ("8GB"); empty: half of the machine's RAM
};

// --trace-ranks/--trace-from/--trace-to, checked for their form before the run.
engine::TraceFilter trace_filter(const RunArgs& a) {
  engine::TraceFilter f;
  try {
    if (!a.trace_ranks.empty()) f.ranks = models::parse_rank_list(a.trace_ranks);
  } catch (const std::exception& e) {
    throw BadInput("--trace-ranks " + a.trace_ranks + ": " + e.what());
  }
  for (const auto& [text, flag, time] : {std::tuple{a.trace_from, "--trace-from", &f.from},
                                         std::tuple{a.trace_to, "--trace-to", &f.to}}) {
    if (text.empty()) continue;
    try {
      *time = models::parse_time(text);
    } catch (const std::exception& e) {
      throw BadInput(std::string(flag) + " " + text + ": " + e.what());
    }
  }
  return f;
}

int run(const RunArgs& a) {
  const engine::TraceFilter filter = trace_filter(a);
  // Check the outputs before a long simulation rather than after it: here against the scenario
  // file, in predict() again against every input once the scenario is loaded.
  models::RunRequest request;
  if (a.file == "-") {
    // The scenario on standard input: errors cite "<stdin>:LINE:COL", relative paths in it are
    // taken from the current directory.
    std::ostringstream text;
    text << std::cin.rdbuf();
    request.text = text.str();
  }
  for (const auto& [path, flag] : {std::pair{a.json_out, "--json"}, {a.trace_out, "--trace"}})
    if (!path.empty()) request.outputs.emplace_back(path, flag);
  models::check_output_paths(request.outputs, {a.file});
  request.scenario = a.file == "-" ? "<stdin>" : a.file;
  request.overrides = a.overrides;
  if (!a.network.empty()) request.network = a.network;
  request.record_link_rates = !a.trace_out.empty();
  request.record_starts = !a.trace_out.empty();  // only the trace reads each op's start
  request.strict = a.strict;
  if (a.max_memory.empty()) {
    request.max_memory = models::default_memory_budget();
    request.max_memory_origin = "half of this machine's RAM (--max-memory)";
  } else {
    double bytes = 0.0;
    try {
      bytes = models::parse_size(a.max_memory);
    } catch (const std::exception& e) {
      throw BadInput("--max-memory " + a.max_memory + ": " + e.what());
    }
    // Bounded before the conversion: a double past int64 does not convert.
    if (!(bytes >= 1.0 && bytes <= 1e18))
      throw BadInput("--max-memory " + a.max_memory + ": out of range; allowed: 1B to 1EB");
    request.max_memory = static_cast<std::int64_t>(bytes);
    request.max_memory_origin = "--max-memory " + a.max_memory;
  }
  PhaseProgress progress("clustersim run " + std::filesystem::path(a.file).stem().string());
  request.progress = progress.callback();
  const models::Prediction p = models::predict(request);
  progress.done();

  // A rank the run does not have is bad input, found before anything is written.
  try {
    models::check_trace_filter(p, filter);
  } catch (const std::invalid_argument& e) {
    throw BadInput(std::string("--trace-ranks/--trace-from/--trace-to: ") + e.what());
  }
  print_summary(std::cout, p.scenario, p.output.result);
  if (a.timings) print_phase_seconds(std::cout, progress.phase_seconds());
  // What was printed goes first when an output is standard output too (--json /dev/stdout).
  std::cout.flush();
  std::fflush(stdout);
  if (!a.json_out.empty()) {
    models::write_result_json(p, a.json_out, a.reproducible);
    std::cout << "  result JSON: " << a.json_out << "\n";
  }
  if (!a.trace_out.empty()) {
    models::write_trace(p, a.trace_out, progress.callback(), filter,
                        a.trace_compression == "deflate");
    progress.done();
    std::cout << "  trace: " << a.trace_out << " (open it in https://ui.perfetto.dev)\n";
  }
  return kExitOk;  // a plan that does not fit is still a prediction; the summary says so
}

}  // namespace

void add_run_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand("run", "Simulate one scenario and print a summary");
  cmd->add_option("FILE", args->file, "Scenario file (YAML), or - for standard input")
      ->required()
      ->check(CLI::Validator(
          [](std::string& f) { return f == "-" ? std::string() : CLI::ExistingFile(f); }, "FILE"));
  cmd->add_option("--set", args->overrides,
                  "Override a key by its path, e.g. --set parallel.tp=4 (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--json", args->json_out, "Write the result JSON here");
  CLI::Option* trace = cmd->add_option(
      "--trace", args->trace_out,
      "Write a trace here: Perfetto's protobuf format for *.pftrace (any size), Chrome JSON else");
  cmd->add_option("--trace-ranks", args->trace_ranks,
                  "Keep only these ranks in the trace, e.g. 0-7,512")
      ->needs(trace);
  cmd->add_option("--trace-from", args->trace_from,
                  "Keep only what runs from this simulated time on, e.g. 1.5s")
      ->needs(trace);
  cmd->add_option("--trace-to", args->trace_to,
                  "Keep only what runs until this simulated time, e.g. 2s")
      ->needs(trace);
  cmd->add_option("--trace-compression", args->trace_compression,
                  "A .pftrace's packets in zlib-compressed bundles, as Perfetto reads them "
                  "(deflate, the default), or plain for protoc --decode (none)")
      ->check(CLI::IsMember({"deflate", "none"}))
      ->needs(trace);
  cmd->add_option("--network", args->network, "Network model (overrides simulation.network_model)")
      ->check(CLI::IsMember(engine::network_model_names()));
  cmd->add_flag("--reproducible", args->reproducible,
                "Write simulator.wall_s as 0 so identical inputs give byte-identical JSON");
  cmd->add_option("--max-memory", args->max_memory,
                  "Refuse a run estimated to need more memory than this (default: half the RAM)");
  cmd->add_flag(
      "--timings", args->timings,
      "Print the wall time of each phase: loading, building, matching, simulating, metrics");
  cmd->add_flag("--strict", args->strict,
                "Refuse a calibration profile measured on another GPU family (else a note)");
  cmd->callback([args, &action] { action = [args] { return run(*args); }; });
}

}  // namespace clustersim::cli
