// How long an op that runs on a GPU (compute or device copy) takes. The engine knows nothing of
// precisions or efficiencies: models/ implements this interface (the roofline model) and the
// calibration profile feeds it.
#pragma once

#include "engine/schedule.hpp"
#include "engine/units.hpp"

namespace clustersim::engine {

class ComputeModel {
 public:
  virtual ~ComputeModel() = default;
  // Duration of a compute or copy op. Called once per op before the simulation starts.
  virtual Time duration(const Op& op) const = 0;
};

}  // namespace clustersim::engine
