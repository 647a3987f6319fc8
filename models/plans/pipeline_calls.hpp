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
//   next backward has posted its own (send_prev_wait_handle); a leading stage's input and the
//   first steady backward's gradient are received where Megatron-Core posts them
//   (PipelineStep::recv_after_pass), which may be passes ahead;
// - `none` under DualPipe (dualpipe.py's _commit_and_wait_comm): a call before every chunk (a
//   forward, a full backward with its W, an F&B pair with its W, a deferred W) posts the sends
//   the chunks before it left, the receives of the pass it starts and some of a later pass's
//   (`receives_posted_at`), and the chunk waits for them all; a chunk's sends are posted at its
//   end, a held-back forward's (step 2) after the next chunk (training_schedule.cpp emits them;
//   `defers_sends`);
// - `none` under Megatron's interleaved schedule (no overlap_p2p_comm): the same machinery, a
//   steady forward and the backward after it one chunk (send_forward_backward_recv_forward_backward
//   after both), the backward's receive posted at the forward's call;
// - `full` (the zero-bubble runtime): receives are posted as early as their stream allows and no
//   compute waits for a send, the most overlap a runtime gets.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/schedule.hpp"
#include "models/plans/pipeline_order.hpp"
#include "models/scenario.hpp"

namespace clustersim::models {

// A pipeline send, as described before it is posted (DualPipe holds its sends until a call).
struct PipelineSend {
  engine::Rank r = 0;
  engine::StreamId stream = 0;
  const char* name = "";
  std::uint32_t microbatch = 0;
  engine::Rank peer = 0;
  std::uint64_t bytes = 0;
  std::uint32_t tag = 0;
};

class PipelineCalls {
 public:
  explicit PipelineCalls(const ParallelConfig& parallel);

  // What a pass's transfers stand on: its first compute waits for `wait`; its receive is posted
  // after `recv_after`.
  struct Call {
    std::vector<engine::OpId> wait;
    std::vector<engine::OpId> recv_after;
    engine::OpId received = engine::kNone;  // its receive, if an earlier call posted it
  };
  // Starts a rank's passes of one iteration, in the order `steps`.
  void begin_rank(const std::vector<PipelineStep>& steps);
  // The call before the next pass (a forward or a backward), the rank's compute having ended in
  // `last_compute` (kNone: nothing yet). Calls of an F&B pair are both taken before either pass.
  Call before_pass(bool forward, engine::OpId last_compute) const;
  // What a call posts its receives after, the rank's compute having ended in `last_compute`.
  engine::OpId call_point(engine::OpId last_compute) const;
  // The passes whose calls were taken are emitted from here on.
  void start_passes() { due_.clear(); }
  // A send the pass of `forward`'s direction being emitted posts.
  void sent(bool forward, engine::OpId send) {
    if (tracks_sends_) posting_[forward ? 0 : 1].push_back(send);
  }
  // A pass (a forward or a backward) has been emitted, the rank's compute ending in
  // `last_compute`.
  void ended_pass(bool forward, engine::OpId last_compute);
  // Sends a compute step between passes (a W step) waits for.
  std::span<const engine::OpId> due_sends() const { return due_; }
  // Every send not yet waited for: the optimizer step waits for them.
  std::vector<engine::OpId> outstanding_sends() const;

  // DualPipe: sends are posted at the end of their chunk, not of their pass. A pass's sends are
  // deferred here; at the chunk's end `end_chunk` returns those to post now (the chunk's, unless
  // it holds them back past the next chunk, and any the chunk before held back), and the caller
  // reports each it posts; the next call waits for it.
  bool defers_sends() const { return defers_sends_; }
  void defer(const PipelineSend& send) { chunk_.push_back(send); }
  std::vector<PipelineSend> end_chunk(bool hold);
  void posted(engine::OpId send) { due_.push_back(send); }
  // DualPipe: a W has ended its chunk (its full backward's, or its own) in `last_compute`; the
  // next call follows it.
  void ended_chunk(engine::OpId last_compute) { end_of_last_ = last_compute; }
  // The steps whose receive step i's call posts, a pass or more ahead (PipelineStep::
  // recv_after_pass), which the caller posts and reports (`posted_early`); where calls block
  // (`defers_sends`) the compute after that call waits for them.
  std::span<const std::size_t> receives_posted_at(std::size_t i) const {
    return receives_at_call_.empty() ? std::span<const std::size_t>{} : receives_at_call_.at(i);
  }
  void posted_early(std::size_t step, engine::OpId receive) { early_.at(step) = receive; }
  // Step i's receive if an earlier call posted it, else kNone.
  engine::OpId early_receive(std::size_t i) const {
    return early_.empty() ? engine::kNone : early_.at(i);
  }

 private:
  P2POverlap mode_;
  bool separate_calls_;  // Megatron's non-interleaved schedules
  bool tracks_sends_;
  bool defers_sends_;  // calls at chunk ends: DualPipe's, Megatron's interleaved without overlap
  std::array<std::vector<engine::OpId>, 2> posting_;  // by direction: the passes being emitted's
  std::vector<engine::OpId> due_;                     // the next compute waits for these
  std::vector<engine::OpId> held_;  // one_pass: the last backward's, due after the next backward
  std::array<engine::OpId, 2> end_of_ = {engine::kNone, engine::kNone};  // by direction
  engine::OpId end_of_last_ = engine::kNone;
  std::vector<PipelineSend> chunk_, held_back_;             // deferred sends before their call
  std::vector<std::vector<std::size_t>> receives_at_call_;  // by step: the receives its call posts
  std::vector<engine::OpId> early_;  // by step: its receive, posted at an earlier call (or kNone)
  int last_direction_ = -1;          // 0 forward, 1 backward, -1 none yet
};

}  // namespace clustersim::models
