// The order in which one pipeline stage runs its forward and backward passes (DESIGN.md "PP"):
// GPipe (all forwards, then all backwards), 1F1B (PipeDream-Flush: warm-up forwards, then one
// forward one backward, then cool-down backwards), Megatron's interleaved 1F1B over virtual
// stages (model chunks), the zero-bubble ZB-H1 and ZB-H2, whose backward is two passes:
// B (input gradients, on the critical path) and W (weight gradients, placed to fill bubbles), and
// DeepSeek's bidirectional DualPipe (pipeline_dualpipe.cpp).
#pragma once

#include <vector>

#include "models/scenario.hpp"

namespace clustersim::models {

struct PipelineStep {
  bool forward = true;
  int microbatch = 0;
  // Virtual stage (model chunk) on this rank, 0 without interleaving; under dualpipe the
  // direction: 0 runs stage s of the forward direction, 1 stage pp − 1 − s of the reverse one.
  int chunk = 0;
  // A zero-bubble schedule's W pass (forward false): the weight gradients of a micro-batch whose
  // B pass (forward false, weight false) ran before. Schedules that do not split the backward
  // have no W steps, and their backward steps compute both.
  bool weight = false;
  // Dualpipe's F&B pair: this forward and the backward of the next step run as one pair, their
  // sub-layer pieces interleaved (training_schedule.cpp; docs/dualpipe.md).
  bool paired = false;
  // Calls that post a chunk's transfers at its end (pipeline_calls.hpp): DualPipe's (deepseek-ai/
  // DualPipe dualpipe.py) and Megatron's interleaved schedule without overlap_p2p_comm. A step
  // that runs in the chunk of the step before it, no call between them (DualPipe's full
  // backward: its W after its B, the B's sends posted after the W; Megatron's steady backward
  // after its forward, both passes' sends posted in one call after it); a forward whose sends are
  // posted only after the chunk that follows it (DualPipe's step 2 holds them back); the step
  // whose call posts this pass's receive, when an earlier call does (-1: its own). That call
  // waits for it: DualPipe's step 2 appends the next near forward's receive before the far
  // forward's call, step 3 a far forward's before the W's; Megatron receives a steady backward's
  // gradient in the call before its forward.
  bool in_chunk_before = false;
  bool send_held = false;
  int recv_posted_at = -1;
};

// Whether `schedule` splits each backward into a B and a W pass.
bool splits_backward(PipelineSchedule schedule);

// Steps of stage `stage` of `stages`, for `microbatches` micro-batches and `chunks` model chunks
// per stage (chunks > 1 only for interleaved, and 2 for dualpipe, which ignores it). Interleaved
// runs the micro-batches in groups of `group` through each chunk (0: stages, Megatron's default;
// it needs group >= stages and a last group of 0 or at least `stages` micro-batches).
std::vector<PipelineStep> pipeline_order(PipelineSchedule schedule, int stage, int stages,
                                         int microbatches, int chunks, int group = 0);

// DualPipe (DeepSeek-V3 §3.2.1; deepseek-ai/DualPipe): rank `stage` of an even `stages` holds
// stage `stage` of the forward direction (chunk 0) and stage stages − 1 − stage of the reverse
// one (chunk 1). Micro-batches 0 .. m/2 − 1 enter at rank 0 and run forward-direction; m/2 .. m − 1
// enter at rank stages − 1. Needs m even and m >= 2 · stages. A backward of the F&B pairs (and of
// the cool-down's first half) is followed at once by its W step; the others' W comes later.
std::vector<PipelineStep> dualpipe_order(int stage, int stages, int microbatches);

// Most micro-batches whose activations a stage holds at once under this order (counted from the
// order itself: forwards done minus backwards done, per chunk summed; where the backward is split,
// a micro-batch is held until its W pass, whose weight gradients need its saved inputs).
int peak_in_flight(const std::vector<PipelineStep>& steps);

}  // namespace clustersim::models
