// What one GPU must hold (DESIGN.md "Memory model"): weights, gradients, optimizer states,
// activations and communication buffers, for the rank that needs the most.
#pragma once

#include <string>

#include "engine/schedule.hpp"
#include "models/schedule_builder.hpp"

namespace clustersim::models {

struct MemoryBreakdown {
  double weights = 0;
  double gradients = 0;
  double optimizer = 0;
  double activations = 0;
  double buffers = 0;
  double total() const { return weights + gradients + optimizer + activations + buffers; }
};

struct MemoryEstimate {
  MemoryBreakdown peak;  // of the rank that needs the most
  engine::Rank peak_rank = 0;
  double capacity = 0;  // the GPU's memory
  bool fits() const { return peak.total() <= capacity; }
  std::string largest_term() const;  // "optimizer", ...
};

MemoryEstimate estimate_memory(const Scenario& scenario, const BuiltSchedule& built);

}  // namespace clustersim::models
