// When a pipeline's compute waits for its transfers (parallel.pp_p2p_overlap; docs/parallelism.md
// "When the compute waits for a transfer"). A framework posts a stage's sends and receives in
// calls between its passes, and the compute after a call waits for what the call posted:
// - `none` (Megatron's gpipe and 1F1B): a pass's receive is posted when the rank reaches it,
//   after the pass before; its compute waits for that receive and for the sends of the pass
//   before (batch_isend_irecv, then wait). Megatron posts two passes of one direction in separate
//   calls (send_forward, then recv_forward), so there the receive also waits for the sends;
// - `one_pass` (Megatron's interleaved schedule, overlap_p2p_comm): the receive is posted after
//   the rank's last pass of the same direction, so it runs beside the pass between; a forward's
//   send is waited before the next compute (deallocate_pipeline_outputs), a backward's once the
//   next backward has posted its own (send_prev_wait_handle);
// - `full` (the zero-bubble runtime, DualPipe): receives are posted as early as their stream
//   allows and no compute waits for a send, the most overlap a runtime gets.
#pragma once

#include <array>
#include <span>
#include <vector>

#include "engine/schedule.hpp"
#include "models/scenario.hpp"

namespace clustersim::models {

class PipelineCalls {
 public:
  explicit PipelineCalls(const ParallelConfig& parallel);

  // What a pass's transfers stand on: its first compute waits for `wait`; its receive is posted
  // after `recv_after`.
  struct Call {
    std::vector<engine::OpId> wait;
    std::vector<engine::OpId> recv_after;
  };
  // Starts a rank's passes of one iteration.
  void begin_rank();
  // The call before a forward (or backward) pass, the rank's compute having ended in
  // `last_compute` (kNone: nothing yet). Calls of an F&B pair are both taken before either pass.
  Call before_pass(bool forward, engine::OpId last_compute) const;
  // The passes whose calls were taken are emitted from here on.
  void start_passes() { due_.clear(); }
  // A send the pass of `forward`'s direction being emitted posts.
  void sent(bool forward, engine::OpId send) {
    if (tracks_sends_) posting_[forward ? 0 : 1].push_back(send);
  }
  // A pass of `forward`'s direction has been emitted, the rank's compute ending in
  // `last_compute`.
  void ended_pass(bool forward, engine::OpId last_compute);
  // Sends a compute step between passes (a W step) waits for.
  std::span<const engine::OpId> due_sends() const { return due_; }
  // Every send not yet waited for: the optimizer step waits for them.
  std::vector<engine::OpId> outstanding_sends() const;

 private:
  P2POverlap mode_;
  bool separate_calls_;  // Megatron's non-interleaved schedules
  bool tracks_sends_;
  std::array<std::vector<engine::OpId>, 2> posting_;  // by direction: the passes being emitted's
  std::vector<engine::OpId> due_;                     // the next compute waits for these
  std::vector<engine::OpId> held_;  // one_pass: the last backward's, due after the next backward
  std::array<engine::OpId, 2> end_of_ = {engine::kNone, engine::kNone};  // by direction
  engine::OpId end_of_last_ = engine::kNone;
  int last_direction_ = -1;  // 0 forward, 1 backward, -1 none yet
};

}  // namespace clustersim::models
