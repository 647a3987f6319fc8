#include "models/plans/pipeline_calls.hpp"

#include <utility>

namespace clustersim::models {

PipelineCalls::PipelineCalls(const ParallelConfig& parallel)
    : mode_(parallel.pp_p2p_overlap_mode()),
      separate_calls_(parallel.schedule != PipelineSchedule::interleaved &&
                      parallel.schedule != PipelineSchedule::dualpipe),
      tracks_sends_(parallel.pp > 1 && parallel.pipeline_engine == PipelineEngine::megatron &&
                    mode_ != P2POverlap::full),
      defers_sends_(tracks_sends_ && parallel.schedule == PipelineSchedule::dualpipe) {}

void PipelineCalls::begin_rank() {
  posting_ = {};
  due_.clear();
  held_.clear();
  end_of_ = {engine::kNone, engine::kNone};
  end_of_last_ = engine::kNone;
  last_direction_ = -1;
  chunk_.clear();
  held_back_.clear();
  forward_end_ = {engine::kNone, engine::kNone};
}

namespace {

// DualPipe's chunk index is its direction (pipeline_order.hpp).
std::size_t chunk_direction(const PipelineStep& step) {
  return static_cast<std::size_t>(step.chunk) % 2;
}

}  // namespace

PipelineCalls::Call PipelineCalls::before_pass(const PipelineStep& step,
                                               engine::OpId last_compute) const {
  Call call;
  if (!tracks_sends_) return call;
  call.wait = due_;
  const int direction = step.forward ? 0 : 1;
  // A weight-gradient step between passes does not hold the call back (DualPipe posts before
  // it); at an iteration's start the call follows whatever the rank ran last.
  engine::OpId posted = end_of_last_ != engine::kNone ? end_of_last_ : last_compute;
  if (mode_ == P2POverlap::one_pass && end_of_[direction] != engine::kNone)
    posted = end_of_[direction];
  // DualPipe appends some receives at the call before the pass ahead: after the rank's previous
  // forward of the same direction.
  if (defers_sends_ && step.recv_early && forward_end_[chunk_direction(step)] != engine::kNone)
    posted = forward_end_[chunk_direction(step)];
  if (posted != engine::kNone) call.recv_after.push_back(posted);
  if (mode_ == P2POverlap::none && separate_calls_ && last_direction_ == direction)
    call.recv_after.insert(call.recv_after.end(), due_.begin(), due_.end());
  return call;
}

void PipelineCalls::ended_pass(const PipelineStep& step, engine::OpId last_compute) {
  const bool forward = step.forward;
  if (forward) forward_end_[chunk_direction(step)] = last_compute;
  auto& posted = posting_[forward ? 0 : 1];
  if (mode_ == P2POverlap::one_pass && !forward) {
    // Megatron waits for a backward's send after the next backward has posted its own.
    due_.insert(due_.end(), held_.begin(), held_.end());
    held_ = std::move(posted);
  } else {
    due_.insert(due_.end(), posted.begin(), posted.end());
  }
  posted.clear();
  end_of_[forward ? 0 : 1] = last_compute;
  end_of_last_ = last_compute;
  last_direction_ = forward ? 0 : 1;
}

std::vector<PipelineSend> PipelineCalls::end_chunk(bool hold) {
  std::vector<PipelineSend> now = std::move(held_back_);
  held_back_.clear();
  if (hold)
    held_back_ = std::move(chunk_);
  else
    now.insert(now.end(), chunk_.begin(), chunk_.end());
  chunk_.clear();
  return now;
}

std::vector<engine::OpId> PipelineCalls::outstanding_sends() const {
  std::vector<engine::OpId> all = due_;
  all.insert(all.end(), held_.begin(), held_.end());
  return all;
}

}  // namespace clustersim::models
