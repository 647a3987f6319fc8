// clustersim-execute-mpi: the MPI back end of `clustersim execute` as its own executable, so that
// only it links the MPI libraries (docs/execution.md). `clustersim execute --backend mpi` replaces
// itself with this program, so under `mpirun -np N clustersim execute FILE --backend mpi` every
// rank is this program; it can also be run directly with the same options (no --backend).
#include <CLI/CLI.hpp>
#include <iostream>

#include "calibrate/mpi/executor.hpp"
#include "cli/command.hpp"
#include "cli/execute_options.hpp"

int main(int argc, char** argv) {
  using namespace clustersim;
  CLI::App app{
      "clustersim-execute-mpi: run a scenario's schedule for real under mpirun, one process per "
      "rank (usually started by `clustersim execute --backend mpi`)"};
  app.set_version_flag("--version", std::string("clustersim-execute-mpi ") + CLUSTERSIM_VERSION);
  calibrate::ExecuteOptions options;
  cli::add_execute_options(app, options);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? cli::kExitOk : cli::kExitBadInput;
  }
  try {
    return calibrate::execute_mpi(options);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return cli::kExitFailure;
  }
}
