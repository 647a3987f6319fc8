// The roofline compute model of DESIGN.md: op time = launch overhead +
// max(FLOPs / (peak(precision) × efficiency), bytes / (HBM bandwidth × efficiency)).
#pragma once

#include "engine/compute_model.hpp"
#include "models/hardware.hpp"

namespace clustersim::models {

class RooflineComputeModel : public engine::ComputeModel {
 public:
  // Efficiencies default to the GPU preset's; a calibration profile may replace them.
  explicit RooflineComputeModel(GpuSpec gpu) : gpu_(std::move(gpu)) {}
  engine::Time duration(const engine::Op& op) const override;
  const GpuSpec& gpu() const { return gpu_; }

 private:
  GpuSpec gpu_;
};

}  // namespace clustersim::models
