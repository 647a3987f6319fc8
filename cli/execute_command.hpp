// `clustersim execute FILE --backend mpi|cuda [--iterations N] [--warmup K] --json OUT --trace OUT`
// (docs/execution.md): runs the schedule the simulator runs on real hardware. The back end needs
// an MPI or GPU library, which clustersim does not load: the command checks its arguments and
// replaces itself with clustersim-execute-<backend> (cli/calibrate_backend.hpp), so under mpirun
// every rank becomes the back end.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/command.hpp"

namespace clustersim::cli {

void add_execute_command(CLI::App& app, Action& action);

}  // namespace clustersim::cli
