// `clustersim run FILE [--set key=value]... [--json OUT] [--trace OUT] [--network MODEL]`
#pragma once

#include "cli/command.hpp"

namespace clustersim::cli {
void add_run_command(CLI::App& app, Action& action);
}
