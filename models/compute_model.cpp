#include "models/compute_model.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace clustersim::models {

engine::Time RooflineComputeModel::duration(const engine::Op& op) const {
  const double memory_s =
      static_cast<double>(op.bytes) / (gpu_.hbm_bandwidth * gpu_.memory_efficiency);
  double compute_s = 0.0;
  if (op.kind == engine::OpKind::compute && op.flops > 0.0) {
    const double peak = gpu_.peak_flops.at(op.precision);
    if (!(peak > 0.0))
      throw std::invalid_argument(gpu_.name + " has no " +
                                  std::string(to_string(static_cast<Precision>(op.precision))) +
                                  " throughput");
    compute_s = op.flops / (peak * gpu_.compute_efficiency);
  }
  return engine::Time::from_seconds(gpu_.launch_overhead_s + std::max(compute_s, memory_s));
}

}  // namespace clustersim::models
