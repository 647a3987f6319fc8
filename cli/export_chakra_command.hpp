// `clustersim export-chakra FILE --out PREFIX`: the scenario's schedule as Chakra execution traces
// (docs/interop.md).
#pragma once

#include "cli/command.hpp"

namespace clustersim::cli {

void add_export_chakra_command(CLI::App& app, Action& action);

}  // namespace clustersim::cli
