// How long an op that runs on a GPU (compute or device copy) takes. The engine knows nothing of
// precisions, efficiencies or kernels: models/ implements this interface (the kernel and roofline
// models) and the calibration profile feeds it.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/kernels.hpp"
#include "engine/schedule.hpp"
#include "engine/units.hpp"

namespace clustersim::engine {

class ComputeModel {
 public:
  virtual ~ComputeModel() = default;
  // Duration of a compute or copy op that names no kernel list the model costed; `flops` is its
  // FLOPs (Schedule::flops(op): the op holds only their index), 0 for a copy. Called once per op
  // before the simulation starts.
  virtual Time duration(const Op& op, double flops) const = 0;
  // Duration of every kernel list of `table` (index = list), asked once per schedule before the
  // simulation starts: a compute op naming list i (Op::kernels) then lasts the i-th figure, so
  // ops that share a list share one costing. A model that does not cost kernels returns nothing
  // (the default), and every op is costed by duration(op).
  virtual std::vector<Time> kernel_list_durations(const KernelTable& /*table*/) const { return {}; }
  // Whether the model costs kernel lists with some of the GPU's SMs held by communication
  // kernels (engine/sm_sharing.hpp); if not, overlapped compute keeps its full-GPU pace.
  virtual bool models_sm_sharing() const { return false; }
  // The durations of kernel_list_durations(table) while communication kernels hold `sms_held`
  // of the GPU's SMs (one per NCCL channel). Asked once per distinct count a run meets.
  virtual std::vector<Time> kernel_list_durations_sharing(const KernelTable& table,
                                                          std::uint32_t /*sms_held*/) const {
    return kernel_list_durations(table);
  }
};

}  // namespace clustersim::engine
