// CPU microbenchmarks of the MPI backend: host memcpy bandwidth and Eigen GEMM throughput.
#pragma once

#include <functional>
#include <vector>

#include "calibrate/measurements.hpp"

namespace clustersim::calibrate {

// Seconds per call of `fn`, the best of `repeats` timed batches (the best filters out noise from
// other processes on a shared machine).
double time_best(const std::function<void()>& fn, int iterations, int repeats = 3);

std::vector<double> copy_sizes(bool quick);  // bytes
CopyMeasurement measure_host_copy(double bytes);

std::vector<std::uint64_t> gemm_sizes(bool quick);    // square m = n = k
GemmMeasurement measure_eigen_gemm(std::uint64_t n);  // fp32

}  // namespace clustersim::calibrate
