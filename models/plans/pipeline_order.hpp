// The order in which one pipeline stage runs its forward and backward passes (DESIGN.md "PP"):
// GPipe (all forwards, then all backwards), 1F1B (PipeDream-Flush: warm-up forwards, then one
// forward one backward, then cool-down backwards), Megatron's interleaved 1F1B over virtual
// stages (model chunks), the zero-bubble ZB-H1 and ZB-H2, whose backward is two passes:
// B (input gradients, on the critical path) and W (weight gradients, placed to fill bubbles), and
// DeepSeek's bidirectional DualPipe (pipeline_dualpipe.cpp).
#pragma once

#include <cstddef>
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
  // Where the framework's calls put this pass's transfers (pipeline_calls.hpp). `in_chunk_before`:
  // it runs in the chunk of the step before, no call between them (DualPipe's full backward: its
  // W after its B, the B's sends posted after the W; Megatron's interleaved steady backward after
  // its forward without overlap_p2p_comm, both passes' sends posted in one call after it).
  // `send_held`: its sends are posted only after the chunk that follows it (DualPipe's step 2).
  // `recv_after_pass`: the step after whose pass the framework posts this pass's receive, when
  // that is not the pass before it (-1); it goes in the first call after that pass (the calls
  // that block wait for it there). DualPipe's step 2 appends the next near forward's receive
  // after the near forward before it, step 3 a far forward's after the B before the W; Megatron's
  // interleaved schedule receives a steady backward's gradient after the backward before it (the
  // first after the warm-up's last forward), and a leading stage's input p − 1 passes after the
  // ending stage produced it (recv_tensor_from_previous_stage).
  bool in_chunk_before = false;
  bool send_held = false;
  int recv_after_pass = -1;
};

// The index of the first call after step i under calls that block at chunk ends: the next step
// that does not run in i's chunk (steps.size() when none is left).
std::size_t call_after(const std::vector<PipelineStep>& steps, std::size_t i);

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
