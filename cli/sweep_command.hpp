// `clustersim sweep FILE --vary KEY=V1,V2,... [--vary ...] [--csv OUT] [--json OUT] [--resume OUT]`
// (docs/sweeps.md). The sweep itself is models/sweep.hpp; this is its presentation. Under
// `mpirun -np N` the command replaces itself with clustersim-sweep-mpi (cli/sweep_mpi_main.cpp),
// which registers the same options and swaps only the point executor.
#pragma once

#include <string>
#include <vector>

#include "cli/command.hpp"
#include "models/sweep.hpp"

namespace clustersim::cli {

struct SweepArgs {
  std::string file;
  std::vector<std::string> overrides;
  std::vector<std::string> vary;
  std::string csv_out;
  std::string json_out;
  std::string resume;
  std::string network;
  unsigned jobs = 0;
};

void add_sweep_command(CLI::App& app, Action& action);
// The options of `sweep`, on `cmd`, filling `args`.
void add_sweep_options(CLI::App& cmd, SweepArgs& args);
// The request the options describe, without the rows of --resume (every MPI rank builds it).
models::SweepRequest sweep_request(const SweepArgs& args);
// Runs the sweep with `executor` (empty: the thread pool), prints the summary, writes the files.
int run_sweep_command(const SweepArgs& args, const models::PointExecutor& executor);

}  // namespace clustersim::cli
