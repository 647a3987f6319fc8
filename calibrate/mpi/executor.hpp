// The MPI back end of `clustersim execute` (docs/execution.md): under mpirun, every process loads
// the scenario through the front-end API, takes its own rank's ops from the schedule and runs
// them for real (calibrate/host_work.hpp, calibrate/mpi/exec_comm.hpp), with one progress engine
// per rank and a watchdog per op. Rank 0 gathers the times and writes the measured result JSON
// and trace (calibrate/execution.hpp). Compiled only when MPI is found, into
// clustersim_calibrate_mpi; only clustersim-execute-mpi links it.
#pragma once

#include "calibrate/execution.hpp"

namespace clustersim::calibrate {

// Runs the schedule; returns the process exit code: 0 ok, 1 a failed run (a wrong result, an
// MPI error), 2 bad input (the scenario, the outputs, a launch that does not match the cluster,
// ranks whose schedules differ). A watchdog timeout or a dead peer ends the whole job
// (MPI_Abort) after printing which rank waits on which op. Initializes and finalizes MPI.
//
// Testing aid (docs/execution.md "Fault injection"): CLUSTERSIM_EXECUTE_FAULT=skip:RANK:OP makes
// rank RANK skip op OP (a mismatched schedule); kill:RANK:OP makes it die (SIGKILL) there.
int execute_mpi(const ExecuteOptions& options);

}  // namespace clustersim::calibrate
