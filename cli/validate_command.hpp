// `clustersim validate [DIR] [--json OUT]`: simulated vs published for every validation case.
#pragma once

#include "cli/command.hpp"

namespace clustersim::cli {
void add_validate_command(CLI::App& app, Action& action);
}
