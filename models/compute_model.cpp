#include "models/compute_model.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "models/kernels/kernel_cost.hpp"

namespace clustersim::models {

RooflineComputeModel::RooflineComputeModel(GpuSpec gpu, const ComputeProfile* profile,
                                           bool sm_sharing)
    : gpu_(kernels::calibrated_gpu(gpu, profile)),
      profile_(profile),
      kernels_(kernels::has_kernel_figures(gpu_)),
      sm_sharing_(sm_sharing) {}

namespace {

std::vector<engine::Time> list_durations(const engine::KernelTable& table, const GpuSpec& gpu,
                                         const ComputeProfile* profile) {
  const std::vector<double> seconds = kernels::kernel_list_seconds(table, gpu, profile);
  std::vector<engine::Time> out;
  out.reserve(seconds.size());
  for (double s : seconds)
    out.push_back(engine::Time::from_seconds(s));
  return out;
}

}  // namespace

std::vector<engine::Time> RooflineComputeModel::kernel_list_durations(
    const engine::KernelTable& table) const {
  if (!kernels_) return {};
  return list_durations(table, gpu_, profile_);
}

std::vector<engine::Time> RooflineComputeModel::kernel_list_durations_sharing(
    const engine::KernelTable& table, std::uint32_t sms_held) const {
  if (!kernels_) return {};
  GpuSpec shared = gpu_;
  shared.sms_held = static_cast<int>(std::min<std::uint32_t>(sms_held, 1u << 20));
  return list_durations(table, shared, profile_);
}

bool RooflineComputeModel::profiled(Precision p) const {
  return profile_ != nullptr && profile_->has(to_string(p));
}

engine::Time RooflineComputeModel::duration(const engine::Op& op, double flops) const {
  const double memory_s =
      static_cast<double>(op.bytes) / (gpu_.hbm_bandwidth * gpu_.memory_efficiency);
  double compute_s = 0.0;
  if (op.kind == engine::OpKind::compute && flops > 0.0) {
    const auto precision = static_cast<Precision>(op.precision());
    const double peak = gpu_.peak_flops.at(op.precision());
    if (!(peak > 0.0))
      throw std::invalid_argument(gpu_.name + " has no " + std::string(to_string(precision)) +
                                  " throughput");
    const double efficiency = profiled(precision)
                                  ? profile_->efficiency(to_string(precision), flops, peak)
                                  : gpu_.compute_efficiency;
    compute_s = flops / (peak * efficiency);
  }
  return engine::Time::from_seconds(gpu_.launch_overhead_s + std::max(compute_s, memory_s));
}

}  // namespace clustersim::models
