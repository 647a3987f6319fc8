// The compute side of the CPU (MPI) executor (docs/execution.md "What runs"): an op's FLOPs as
// Eigen fp32 GEMMs on fixed tiles, its memory traffic as memcpy, in slices short enough (about a
// millisecond) that the caller can progress communication between them. Needs no MPI library.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <functional>
#include <vector>

#include "engine/schedule.hpp"

namespace clustersim::calibrate {

class HostWork {
 public:
  // `work_scale` multiplies every FLOP and byte executed (docs/execution.md "Work scale").
  explicit HostWork(double work_scale = 1.0);

  // Runs a compute or copy op: a compute op's kernel list if it has one (GEMM and attention
  // kernels as GEMM FLOPs, memory kernels as copies of their bytes), else its FLOPs as GEMMs, or
  // its bytes as copies when it has no FLOPs; a copy op's bytes as copies. Calls `between` after
  // every slice.
  void run(const engine::Schedule& schedule, const engine::Op& op,
           const std::function<void()>& between);

  // What has been executed so far (after scaling), for tests and reports.
  double flops_done() const { return flops_done_; }
  double bytes_done() const { return bytes_done_; }

  static constexpr int kTile = 256;                    // GEMM tile edge (fp32)
  static constexpr std::size_t kCopySlice = 4u << 20;  // bytes per memcpy slice

 private:
  void gemm_flops(double flops, const std::function<void()>& between);
  void move_bytes(double bytes, const std::function<void()>& between);

  double scale_;
  Eigen::MatrixXf a_, b_, c_;
  std::vector<char> src_, dst_;
  double flops_done_ = 0, bytes_done_ = 0;
};

}  // namespace clustersim::calibrate
