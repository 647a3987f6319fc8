#include "cli/export_chakra_command.hpp"

#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/progress.hpp"
#include "engine/network/network_model.hpp"
#include "models/chakra/chakra_export.hpp"
#include "models/frontend.hpp"

namespace clustersim::cli {

namespace {

struct ExportArgs {
  std::string file;
  std::string prefix;
  std::vector<std::string> overrides;
  std::string network;
};

int export_chakra(const ExportArgs& a) {
  models::RunRequest request;
  request.scenario = a.file;
  request.overrides = a.overrides;
  request.every_rank = true;  // one trace per rank
  if (!a.network.empty()) request.network = a.network;
  // The rank count is known only once the scenario is loaded; the comm-group file's path checks
  // the folder before the run, write_chakra_traces checks every file before writing.
  request.outputs.emplace_back(models::chakra::chakra_output_paths(a.prefix, 0).back(), "--out");
  Progress progress("simulating " + std::filesystem::path(a.file).stem().string());
  request.progress = [&progress](std::string_view phase, double f) {
    if (phase == "simulating") progress.update(f);
  };
  const models::Prediction p = models::predict(request);
  progress.done();
  models::chakra::write_chakra_traces(p, a.prefix);
  const auto ranks = p.output.built.schedule.num_ranks;
  std::cout << "wrote " << a.prefix << ".{0.." << ranks - 1 << "}.et (" << ranks
            << " Chakra execution traces, " << p.output.built.schedule.ops.size() << " nodes) and "
            << a.prefix << ".json (communicator groups)\n";
  return kExitOk;
}

}  // namespace

void add_export_chakra_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<ExportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "export-chakra", "Write the scenario's per-rank schedule as Chakra execution traces");
  cmd->add_option("FILE", args->file, "Scenario file (YAML)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--out", args->prefix,
                  "Output prefix: writes PREFIX.<rank>.et and PREFIX.json (communicator groups)")
      ->required();
  cmd->add_option("--set", args->overrides,
                  "Override a key by its path, e.g. --set parallel.tp=4 (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--network", args->network,
                  "Network model that times the communication nodes' durations")
      ->check(CLI::IsMember(engine::network_model_names()));
  cmd->callback([args, &action] { action = [args] { return export_chakra(*args); }; });
}

}  // namespace clustersim::cli
