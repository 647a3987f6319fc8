// The CUDA backend's entry point (docs/calibration.md "Backends"): inventory, copies, cuBLAS GEMMs
// and NCCL collectives over all local GPUs in one process. Compiled only when nvcc, cuBLAS and
// NCCL are found, into clustersim_calibrate_cuda, which only clustersim-calibrate-cuda links.
#pragma once

#include "calibrate/backend.hpp"

namespace clustersim::calibrate {

// Without a usable GPU: BackendUnavailable ("the cuda backend found no usable GPU (...)") before
// anything is measured.
BenchResult run_cuda_benchmarks(const BenchOptions& options);

}  // namespace clustersim::calibrate
