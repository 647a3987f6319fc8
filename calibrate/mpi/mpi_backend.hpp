// The MPI backend's entry point (docs/calibration.md "Backends"): host memcpy, Eigen GEMMs and MPI
// collectives under mpirun, one process per rank. Compiled only when MPI is found, into
// clustersim_calibrate_mpi, which only clustersim-calibrate-mpi (and its loopback check) link.
#pragma once

#include "calibrate/backend.hpp"

namespace clustersim::calibrate {

// Initializes MPI unless the caller did. One rank: BackendUnavailable ("needs at least 2 ranks").
// Every rank measures; only rank 0's result has `writer` set.
BenchResult run_mpi_benchmarks(const BenchOptions& options);

}  // namespace clustersim::calibrate
