#include "calibrate/cpu_bench.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <chrono>
#include <cstring>

namespace clustersim::calibrate {

double time_best(const std::function<void()>& fn, int iterations, int repeats) {
  fn();  // warm up: page faults, caches, lazy allocation
  double best = 1e300;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iterations; ++i)
      fn();
    const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
    best = std::min(best, dt.count() / iterations);
  }
  return best;
}

std::vector<double> copy_sizes(bool quick) {
  std::vector<double> out;
  for (double s = 4096; s <= (quick ? 4.0 * (1 << 20) : 256.0 * (1 << 20)); s *= 4)
    out.push_back(s);
  return out;
}

CopyMeasurement measure_host_copy(double bytes) {
  const auto n = static_cast<std::size_t>(bytes);
  std::vector<char> src(n, 1), dst(n, 0);
  const int iters = std::max(1, static_cast<int>(64.0 * (1 << 20) / bytes));
  const double s = time_best([&] { std::memcpy(dst.data(), src.data(), n); }, iters);
  return {"host", bytes, s};
}

std::vector<std::uint64_t> gemm_sizes(bool quick) {
  if (quick) return {64, 128, 256};
  return {64, 128, 256, 512, 1024, 2048};
}

GemmMeasurement measure_eigen_gemm(std::uint64_t n) {
  const auto en = static_cast<Eigen::Index>(n);
  Eigen::MatrixXf a = Eigen::MatrixXf::Constant(en, en, 0.5f);
  Eigen::MatrixXf b = Eigen::MatrixXf::Constant(en, en, 0.25f);
  Eigen::MatrixXf c(en, en);
  const double flops =
      2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  const int iters = std::max(1, static_cast<int>(2e8 / flops));
  const double s = time_best([&] { c.noalias() = a * b; }, iters);
  return {n, n, n, "fp32", s};
}

}  // namespace clustersim::calibrate
