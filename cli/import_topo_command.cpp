#include "cli/import_topo_command.hpp"

#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>

#include "engine/io/atomic_file.hpp"
#include "models/frontend.hpp"
#include "models/hardware.hpp"
#include "models/topo_node.hpp"

namespace clustersim::cli {

namespace {

struct ImportTopoArgs {
  std::string file, out, gpu;
};

int run_import_topo(const ImportTopoArgs& a) {
  if (!a.out.empty()) models::check_output_path(a.out, {a.file}, "--out");
  models::TopoImport imported;
  try {
    imported = models::import_topo(a.file, a.gpu);
  } catch (const models::TopoParseError& e) {
    throw BadInput(e.what());
  }
  // The YAML alone on standard output (to redirect); what was inferred beside it, on stderr.
  std::ostream& notes = a.out.empty() ? std::cerr : std::cout;
  if (a.out.empty()) {
    std::cout << imported.yaml;
  } else {
    engine::write_file_atomically(a.out, [&](std::ostream& o) { o << imported.yaml; });
    notes << "wrote " << a.out << "\n";
  }
  notes << "inferred from " << a.file << ":\n";
  for (const auto& line : imported.node.inferred)
    notes << "  " << line << "\n";
  notes << "not in the matrix:\n";
  for (const auto& line : imported.node.not_inferred)
    notes << "  " << line << "\n";
  return kExitOk;
}

}  // namespace

void add_import_topo_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<ImportTopoArgs>();
  CLI::App* cmd =
      app.add_subcommand("import-topo",
                         "Write the scenario's cluster node description that `nvidia-smi topo -m` "
                         "output implies (docs/scenario.md \"A node from nvidia-smi topo -m\")");
  cmd->add_option("FILE", args->file, "`nvidia-smi topo -m` output, as pasted")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--out", args->out, "cluster YAML to write (atomically); default: stdout");
  cmd->add_option("--gpu", args->gpu,
                  "GPU preset of the node: written as gpu:, and picks the NVLink generation")
      ->check(CLI::IsMember(models::gpu_names()));
  cmd->callback([args, &action] { action = [args] { return run_import_topo(*args); }; });
}

}  // namespace clustersim::cli
