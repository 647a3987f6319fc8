#include "calibrate/host_work.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace clustersim::calibrate {

HostWork::HostWork(double work_scale)
    : scale_(work_scale),
      a_(Eigen::MatrixXf::Constant(kTile, kTile, 0.5f)),
      b_(Eigen::MatrixXf::Constant(kTile, kTile, 0.25f)),
      c_(kTile, kTile),
      src_(kCopySlice, 1),
      dst_(kCopySlice, 0) {}

void HostWork::gemm_flops(double flops, const std::function<void()>& between) {
  constexpr double kTileFlops = 2.0 * kTile * kTile * kTile;
  double left = flops * scale_;
  while (left >= kTileFlops) {
    c_.noalias() = a_ * b_;
    left -= kTileFlops;
    flops_done_ += kTileFlops;
    between();
  }
  // The rest as one GEMM with a shorter inner dimension: 2·T·T·k FLOPs.
  const auto k = static_cast<Eigen::Index>(std::llround(left / (2.0 * kTile * kTile)));
  if (k > 0) {
    c_.noalias() = a_.leftCols(k) * b_.topRows(k);
    flops_done_ += 2.0 * kTile * kTile * static_cast<double>(k);
    between();
  }
}

void HostWork::move_bytes(double bytes, const std::function<void()>& between) {
  // `bytes` counts what is read and written: a copy of n bytes moves 2n.
  double left = std::max(0.0, bytes * scale_ / 2.0);
  while (left >= 1.0) {
    const auto n = static_cast<std::size_t>(std::min(left, static_cast<double>(kCopySlice)));
    std::memcpy(dst_.data(), src_.data(), n);
    left -= static_cast<double>(n);
    bytes_done_ += 2.0 * static_cast<double>(n);
    between();
  }
}

void HostWork::run(const engine::Schedule& schedule, const engine::Op& op,
                   const std::function<void()>& between) {
  if (op.kind == engine::OpKind::copy) return move_bytes(static_cast<double>(op.bytes), between);
  if (op.kind != engine::OpKind::compute) return;
  if (op.kernels != engine::kNone) {
    for (const engine::Kernel& k : schedule.kernels.list(op.kernels)) {
      switch (k.kind) {
        case engine::KernelKind::gemm:
        case engine::KernelKind::attention_fwd:
        case engine::KernelKind::attention_bwd:
          gemm_flops(k.flops, between);
          break;
        case engine::KernelKind::memory:
        case engine::KernelKind::host_memory:
          move_bytes(k.bytes, between);
          break;
        case engine::KernelKind::launch_only:
          break;
      }
    }
    return;
  }
  if (const double flops = schedule.flops(op); flops > 0.0)
    gemm_flops(flops, between);
  else
    move_bytes(static_cast<double>(op.bytes), between);
}

}  // namespace clustersim::calibrate
