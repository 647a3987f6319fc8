// clustersim-calibrate-mpi: the MPI calibration back end as its own executable, so that only it
// links the MPI libraries (docs/calibration.md "Backends"). `clustersim calibrate --backend mpi`
// replaces itself with this program, so under `mpirun -np N clustersim calibrate --backend mpi`
// every rank is this program; it can also be run directly: mpirun -np N clustersim-calibrate-mpi
// [--quick] --out PROFILE.
#include "calibrate/mpi/mpi_backend.hpp"
#include "cli/calibrate_backend.hpp"

int main(int argc, char** argv) {
  return clustersim::cli::backend_main(argc, argv, "mpi",
                                       &clustersim::calibrate::run_mpi_benchmarks);
}
