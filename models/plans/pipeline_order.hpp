// The order in which one pipeline stage runs its forward and backward passes (DESIGN.md "PP"):
// GPipe (all forwards, then all backwards), 1F1B (PipeDream-Flush: warm-up forwards, then one
// forward one backward, then cool-down backwards) and Megatron's interleaved 1F1B over virtual
// stages (model chunks).
#pragma once

#include <vector>

#include "models/scenario.hpp"

namespace clustersim::models {

struct PipelineStep {
  bool forward = true;
  int microbatch = 0;
  int chunk = 0;  // virtual stage (model chunk) on this rank, 0 without interleaving
};

// Steps of stage `stage` of `stages`, for `microbatches` micro-batches and `chunks` model chunks
// per stage (chunks > 1 only for interleaved; it then needs microbatches % stages == 0).
std::vector<PipelineStep> pipeline_order(PipelineSchedule schedule, int stage, int stages,
                                         int microbatches, int chunks);

// Most micro-batches whose activations a stage holds at once under this order (counted from the
// order itself: forwards done minus backwards done, per chunk summed).
int peak_in_flight(const std::vector<PipelineStep>& steps);

}  // namespace clustersim::models
