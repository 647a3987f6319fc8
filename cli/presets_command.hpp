// `clustersim presets [gpus|nodes|models]`: the built-in hardware and model presets.
#pragma once

#include "cli/command.hpp"

namespace clustersim::cli {
void add_presets_command(CLI::App& app, Action& action);
}
