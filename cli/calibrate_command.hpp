// `clustersim calibrate` (DESIGN.md "Commands"):
//   clustersim calibrate --backend cuda|mpi [--quick] --out PROFILE
//   clustersim calibrate import-nccl-tests LOG... --out PROFILE
// The import runs here; --backend replaces this process with the back end's own executable
// (cli/calibrate_backend.hpp), so `clustersim` itself links no GPU or MPI library.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/command.hpp"

namespace clustersim::cli {

void add_calibrate_command(CLI::App& app, Action& action);

}  // namespace clustersim::cli
