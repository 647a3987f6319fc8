// `clustersim import-topo FILE [--out cluster.yaml] [--gpu NAME]`: the scenario's `cluster:` node
// description that pasted `nvidia-smi topo -m` output implies (models/topo_node.hpp).
#pragma once

#include "cli/command.hpp"

namespace clustersim::cli {
void add_import_topo_command(CLI::App& app, Action& action);
}
