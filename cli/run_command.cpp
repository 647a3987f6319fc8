#include "cli/run_command.hpp"

#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include "cli/progress.hpp"
#include "cli/summary.hpp"
#include "engine/io/atomic_file.hpp"
#include "engine/trace.hpp"
#include "models/result_json.hpp"
#include "models/run_scenario.hpp"

namespace clustersim::cli {

namespace {

struct RunArgs {
  std::string file;
  std::vector<std::string> overrides;
  std::string json_out;
  std::string trace_out;
  std::string network;
  bool reproducible = false;
};

// Outputs never replace what the user wrote: refuse a path that is the scenario itself. A path
// whose directory does not exist is refused too, before a long simulation rather than after it.
void check_output(const std::string& out, const std::string& scenario, const char* flag) {
  if (out.empty()) return;
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::equivalent(out, scenario, ec))
    throw BadInput(std::string(flag) + " " + out +
                   " is the scenario file; refusing to overwrite it");
  const fs::path dir = fs::path(out).has_parent_path() ? fs::path(out).parent_path() : ".";
  if (!fs::is_directory(dir, ec))
    throw BadInput(std::string(flag) + " " + out + ": directory '" + dir.string() +
                   "' does not exist; allowed: a file in an existing directory");
  if (fs::is_directory(out, ec))
    throw BadInput(std::string(flag) + " " + out + " is a directory; allowed: a file path");
}

int run(const RunArgs& a) {
  check_output(a.json_out, a.file, "--json");
  check_output(a.trace_out, a.file, "--trace");
  const models::Scenario sc = models::load_scenario(a.file, a.overrides);

  models::RunOptions options;
  if (!a.network.empty()) {
    static const std::map<std::string, engine::NetworkModelKind> kinds = {
        {"analytical", engine::NetworkModelKind::analytical},
        {"flow", engine::NetworkModelKind::flow},
        {"ideal", engine::NetworkModelKind::ideal}};
    options.network = kinds.at(a.network);
  }
  options.record_link_rates = !a.trace_out.empty();
  Progress progress("simulating " + sc.name);
  options.progress = [&progress](double f) { progress.update(f); };
  const models::RunOutput out = models::run_scenario(sc, options);
  progress.done();

  print_summary(std::cout, sc, out.result);
  if (!a.json_out.empty()) {
    engine::write_file_atomically(a.json_out, [&](std::ostream& os) {
      os << models::result_to_json(out.result, a.reproducible).dump(2) << "\n";
    });
    std::cout << "  result JSON: " << a.json_out << "\n";
  }
  if (!a.trace_out.empty()) {
    engine::TraceOptions trace;
    trace.counter_links = out.result.busiest_link_ids;
    engine::write_file_atomically(a.trace_out, [&](std::ostream& os) {
      engine::write_trace(os, out.built.schedule, out.timeline, out.topology, trace);
    });
    std::cout << "  trace: " << a.trace_out << " (open it in https://ui.perfetto.dev)\n";
  }
  return kExitOk;  // a plan that does not fit is still a prediction; the summary says so
}

}  // namespace

void add_run_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand("run", "Simulate one scenario and print a summary");
  cmd->add_option("FILE", args->file, "Scenario file (YAML)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--set", args->overrides,
                  "Override a key by its path, e.g. --set parallel.tp=4 (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--json", args->json_out, "Write the result JSON here");
  cmd->add_option("--trace", args->trace_out, "Write a Chrome/Perfetto trace here");
  cmd->add_option("--network", args->network, "Network model (overrides simulation.network_model)")
      ->check(CLI::IsMember({"analytical", "flow", "ideal"}));
  cmd->add_flag("--reproducible", args->reproducible,
                "Write simulator.wall_s as 0 so identical inputs give byte-identical JSON");
  cmd->callback([args, &action] { action = [args] { return run(*args); }; });
}

}  // namespace clustersim::cli
