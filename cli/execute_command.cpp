#include "cli/execute_command.hpp"

#include <memory>
#include <string>

#include "cli/calibrate_backend.hpp"
#include "cli/execute_options.hpp"
#include "models/frontend.hpp"

namespace clustersim::cli {

namespace {

struct ExecuteArgs {
  calibrate::ExecuteOptions options;
  std::string backend;
};

int run_execute(const ExecuteArgs& a) {
  // Refuse a bad output before starting every rank, not after the run.
  std::vector<std::pair<std::string, std::string>> outputs;
  for (const auto& [path, flag] :
       {std::pair{a.options.json_out, "--json"}, {a.options.trace_out, "--trace"}})
    if (!path.empty()) outputs.emplace_back(path, flag);
  models::check_output_paths(outputs, {a.options.scenario});
  if (a.backend == "cuda")
    throw BadInput(
        "execute: the cuda back end is not built yet (docs/execution.md \"Status\"); use "
        "--backend mpi");
  exec_backend(find_companion("clustersim-execute-" + a.backend, install_hint(a.backend)),
               execute_arguments(a.options));
}

}  // namespace

void add_execute_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<ExecuteArgs>();
  CLI::App* cmd = app.add_subcommand(
      "execute", "Run the scenario's schedule for real (under mpirun) and measure it");
  add_execute_options(*cmd, args->options);
  cmd->add_option("--backend", args->backend, "mpi (CPU processes under mpirun) or cuda")
      ->required()
      ->check(CLI::IsMember({"cuda", "mpi"}));
  cmd->callback([args, &action] { action = [args] { return run_execute(*args); }; });
}

}  // namespace clustersim::cli
