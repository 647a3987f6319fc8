// The options of `clustersim execute` (docs/execution.md), declared once for the command and for
// the back-end executables it becomes (clustersim-execute-mpi), so both parse the same line.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "calibrate/execution.hpp"

namespace clustersim::cli {

// Adds FILE, --set, --iterations, --warmup, --work-scale, --op-timeout, --json, --trace.
void add_execute_options(CLI::App& app, calibrate::ExecuteOptions& o);

// The same options written back as arguments, for the back end's command line.
std::vector<std::string> execute_arguments(const calibrate::ExecuteOptions& o);

}  // namespace clustersim::cli
