// `clustersim compare PREDICTED.json MEASURED.json [--trace OUT] [--json OUT] [--top N]`
// (docs/execution.md "Compare"): the prediction error of an execution, as a table, JSON and a
// merged trace (calibrate/compare.hpp holds the logic).
#pragma once

#include <CLI/CLI.hpp>

#include "cli/command.hpp"

namespace clustersim::cli {

void add_compare_command(CLI::App& app, Action& action);

}  // namespace clustersim::cli
