// Raw microbenchmark results (DESIGN.md "Calibration profile"), as every backend and the nccl-tests
// import produce them. Host C++ only (nvcc compiles calibrate/cuda/kernels.cu alone).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/calibration_profile.hpp"

namespace clustersim::calibrate {

// Provenance (who measured, where, with what) is part of the profile the simulator reads.
using models::DeviceInfo;
using models::DeviceLink;
using models::Provenance;

// A memory copy of `bytes` in direction d2d | h2d | d2h | peer | host. For d2d, `bytes` counts
// what was read plus what was written (2× the buffer), as NVIDIA's bandwidthTest does.
struct CopyMeasurement {
  std::string direction;
  double bytes = 0.0;
  double seconds = 0.0;
  int src = -1, dst = -1;  // device indices (peer: source and destination GPU); -1 when none
  double bandwidth() const { return bytes / seconds; }
};

// C[m×n] = A[m×k]·B[k×n] in `dtype` (fp32, tf32, fp16, bf16), `batch` of them per call.
struct GemmMeasurement {
  std::uint64_t m = 0, n = 0, k = 0;
  std::string dtype;
  double seconds = 0.0;
  std::uint64_t batch = 1;
  double flops() const {
    return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) *
           static_cast<double>(batch);
  }
  double flops_per_s() const { return flops() / seconds; }
};

// One row of an nccl-tests-like sweep. `collective` uses engine's names (all_reduce, ...).
struct CollectiveMeasurement {
  std::string collective;
  std::uint32_t ranks = 0;
  std::uint32_t nodes = 1;
  double bytes = 0.0;  // nccl-tests' "size": the buffer size (DESIGN.md payload convention)
  std::uint64_t count = 0;
  std::string dtype;
  bool in_place = false;
  double seconds = 0.0;
  double algbw = 0.0;       // bytes/s
  double busbw = 0.0;       // bytes/s
  std::int64_t wrong = -1;  // elements found wrong; -1 = not checked (nccl-tests "N/A")
};

// A GEMM a backend is asked to measure besides its own grid (`calibrate --shapes-from`), as the
// model states it: row-major C[m×n] = op(A)·op(B), op(A) m×k and op(B) k×n, `batch` of them, in
// `dtype` (a linear layer's forward: m tokens, n output features, B the weight stored [n×k]).
struct GemmRequest {
  std::uint64_t m = 0, n = 0, k = 0, batch = 1;
  std::string dtype;
  bool trans_a = false, trans_b = false;
};

struct Measurements {
  std::vector<CopyMeasurement> copies;
  std::vector<GemmMeasurement> gemms;
  std::vector<CollectiveMeasurement> collectives;
};

}  // namespace clustersim::calibrate
