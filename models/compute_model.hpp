// The roofline compute model of DESIGN.md: op time = launch overhead +
// max(FLOPs / (peak(precision) × efficiency), bytes / (HBM bandwidth × efficiency)).
#pragma once

#include "engine/compute_model.hpp"
#include "models/compute_profile.hpp"
#include "models/hardware.hpp"

namespace clustersim::models {

class RooflineComputeModel : public engine::ComputeModel {
 public:
  // Efficiencies default to the GPU preset's. With `profile` (it must outlive the model), a
  // compute op whose precision the profile measured takes its GEMM efficiency from the profile
  // at the op's FLOPs (ComputeProfile::efficiency) instead.
  explicit RooflineComputeModel(GpuSpec gpu, const ComputeProfile* profile = nullptr)
      : gpu_(std::move(gpu)), profile_(profile) {}
  engine::Time duration(const engine::Op& op) const override;
  const GpuSpec& gpu() const { return gpu_; }
  // Whether ops of precision `p` take their efficiency from the profile.
  bool profiled(Precision p) const;

 private:
  GpuSpec gpu_;
  const ComputeProfile* profile_;
};

}  // namespace clustersim::models
