// The compute model of DESIGN.md "Compute model" (docs/fidelity.md):
// - an op that names a kernel list (Op::kernels) lasts its kernels' time,
//   kernels::kernels_seconds: GEMMs by shape, attention, memory-bound kernels, launch floors and
//   the host launch bound; each distinct list is costed once per schedule;
// - an op without one (a generic layer list's layer, a hand-built schedule, a device copy) and
//   every op on a GPU without kernel figures (a custom GPU given only peaks and bandwidth, the
//   `cpu` preset) keeps the roofline:
//     launch overhead + max(FLOPs / (peak(precision) × efficiency), bytes / (HBM × efficiency)).
// A calibration profile replaces the defaults where it measured: GEMM efficiency by shape (or by
// size) and the memory-bound bandwidth.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/compute_model.hpp"
#include "models/compute_profile.hpp"
#include "models/hardware.hpp"

namespace clustersim::models {

class RooflineComputeModel : public engine::ComputeModel {
 public:
  // Efficiencies default to the GPU preset's. With `profile` (it must outlive the model), a
  // compute op whose precision the profile measured takes its GEMM efficiency from the profile
  // (at the op's FLOPs for the roofline, by shape for a kernel list's GEMMs) instead, and the
  // profile's memory bandwidth, if measured, replaces the preset's HBM share.
  // `sm_sharing`: cost overlapped compute on the SMs communication leaves (simulation.sm_sharing).
  explicit RooflineComputeModel(GpuSpec gpu, const ComputeProfile* profile = nullptr,
                                bool sm_sharing = true);
  engine::Time duration(const engine::Op& op, double flops) const override;
  std::vector<engine::Time> kernel_list_durations(const engine::KernelTable& table) const override;
  // Kernel lists with communication holding SMs (GpuSpec::sms_held): GEMM and attention waves
  // on the SMs left. Only where kernel lists are costed.
  bool models_sm_sharing() const override { return kernels_ && sm_sharing_; }
  std::vector<engine::Time> kernel_list_durations_sharing(const engine::KernelTable& table,
                                                          std::uint32_t sms_held) const override;
  const GpuSpec& gpu() const { return gpu_; }
  // Whether ops of precision `p` take their efficiency from the profile.
  bool profiled(Precision p) const;
  // Whether kernel lists are costed (the GPU carries the kernel model's figures).
  bool costs_kernels() const { return kernels_; }

 private:
  GpuSpec gpu_;
  const ComputeProfile* profile_;
  bool kernels_ = false;
  bool sm_sharing_ = true;
};

}  // namespace clustersim::models
