// clustersim-calibrate-cuda: the CUDA calibration back end as its own executable, so that only it
// links the CUDA libraries (docs/calibration.md "Backends"). `clustersim calibrate --backend cuda`
// replaces itself with this program; it can also be run directly: [--quick] --out PROFILE.
#include "calibrate/cuda/cuda_backend.hpp"
#include "cli/calibrate_backend.hpp"

int main(int argc, char** argv) {
  return clustersim::cli::backend_main(argc, argv, "cuda",
                                       &clustersim::calibrate::run_cuda_benchmarks);
}
