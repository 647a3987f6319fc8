// The order in which one pipeline stage runs its forward and backward passes (DESIGN.md "PP"):
// GPipe (all forwards, then all backwards), 1F1B (PipeDream-Flush: warm-up forwards, then one
// forward one backward, then cool-down backwards), Megatron's interleaved 1F1B over virtual
// stages (model chunks), and the zero-bubble ZB-H1 and ZB-H2, whose backward is two passes:
// B (input gradients, on the critical path) and W (weight gradients, placed to fill bubbles).
#pragma once

#include <vector>

#include "models/scenario.hpp"

namespace clustersim::models {

struct PipelineStep {
  bool forward = true;
  int microbatch = 0;
  int chunk = 0;  // virtual stage (model chunk) on this rank, 0 without interleaving
  // A zero-bubble schedule's W pass (forward false): the weight gradients of a micro-batch whose
  // B pass (forward false, weight false) ran before. Schedules that do not split the backward
  // have no W steps, and their backward steps compute both.
  bool weight = false;
};

// Whether `schedule` splits each backward into a B and a W pass.
bool splits_backward(PipelineSchedule schedule);

// Steps of stage `stage` of `stages`, for `microbatches` micro-batches and `chunks` model chunks
// per stage (chunks > 1 only for interleaved; it then needs microbatches % stages == 0).
std::vector<PipelineStep> pipeline_order(PipelineSchedule schedule, int stage, int stages,
                                         int microbatches, int chunks);

// Most micro-batches whose activations a stage holds at once under this order (counted from the
// order itself: forwards done minus backwards done, per chunk summed; where the backward is split,
// a micro-batch is held until its W pass, whose weight gradients need its saved inputs).
int peak_in_flight(const std::vector<PipelineStep>& steps);

}  // namespace clustersim::models
