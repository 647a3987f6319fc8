// How long an op that runs on a GPU (compute or device copy) takes. The engine knows nothing of
// precisions, efficiencies or kernels: models/ implements this interface (the kernel and roofline
// models) and the calibration profile feeds it.
#pragma once

#include <vector>

#include "engine/kernels.hpp"
#include "engine/schedule.hpp"
#include "engine/units.hpp"

namespace clustersim::engine {

class ComputeModel {
 public:
  virtual ~ComputeModel() = default;
  // Duration of a compute or copy op that names no kernel list the model costed. Called once per
  // op before the simulation starts.
  virtual Time duration(const Op& op) const = 0;
  // Duration of every kernel list of `table` (index = list), asked once per schedule before the
  // simulation starts: a compute op naming list i (Op::kernels) then lasts the i-th figure, so
  // ops that share a list share one costing. A model that does not cost kernels returns nothing
  // (the default), and every op is costed by duration(op).
  virtual std::vector<Time> kernel_list_durations(const KernelTable& /*table*/) const { return {}; }
};

}  // namespace clustersim::engine
