#include "models/plans/pipeline_calls.hpp"

#include <utility>

namespace clustersim::models {

PipelineCalls::PipelineCalls(const ParallelConfig& parallel)
    : mode_(parallel.pp_p2p_overlap_mode()),
      separate_calls_(parallel.schedule != PipelineSchedule::interleaved &&
                      parallel.schedule != PipelineSchedule::dualpipe),
      tracks_sends_(parallel.pp > 1 && parallel.pipeline_engine == PipelineEngine::megatron &&
                    mode_ != P2POverlap::full),
      defers_sends_(tracks_sends_ && (parallel.schedule == PipelineSchedule::dualpipe ||
                                      (parallel.schedule == PipelineSchedule::interleaved &&
                                       mode_ == P2POverlap::none))) {}

void PipelineCalls::begin_rank(const std::vector<PipelineStep>& steps) {
  // A receive posted after an earlier pass goes in the first call after it: under blocking
  // chunk calls the one that ends its chunk, under overlap_p2p_comm the one right after it.
  // Only calls that post receives ahead keep these tables (none for 1F1B and the like).
  receives_at_call_.clear();
  early_.clear();
  if (defers_sends_ || (tracks_sends_ && mode_ == P2POverlap::one_pass)) {
    receives_at_call_.assign(steps.size(), {});
    early_.assign(steps.size(), engine::kNone);
    for (std::size_t j = 0; j < steps.size(); ++j) {
      if (steps[j].recv_after_pass < 0) continue;
      const auto after = static_cast<std::size_t>(steps[j].recv_after_pass);
      const std::size_t call = defers_sends_ ? call_after(steps, after) : after + 1;
      if (call < j) receives_at_call_.at(call).push_back(j);
    }
  }
  posting_ = {};
  due_.clear();
  held_.clear();
  end_of_ = {engine::kNone, engine::kNone};
  end_of_last_ = engine::kNone;
  last_direction_ = -1;
  chunk_.clear();
  held_back_.clear();
}

PipelineCalls::Call PipelineCalls::before_pass(bool forward, engine::OpId last_compute) const {
  Call call;
  if (!tracks_sends_) return call;
  call.wait = due_;
  const int direction = forward ? 0 : 1;
  engine::OpId posted = call_point(last_compute);
  if (mode_ == P2POverlap::one_pass && end_of_[direction] != engine::kNone)
    posted = end_of_[direction];
  if (posted != engine::kNone) call.recv_after.push_back(posted);
  if (mode_ == P2POverlap::none && separate_calls_ && last_direction_ == direction)
    call.recv_after.insert(call.recv_after.end(), due_.begin(), due_.end());
  return call;
}

engine::OpId PipelineCalls::call_point(engine::OpId last_compute) const {
  // Under the zero-bubble schedules a W step between passes does not hold the call back; under
  // DualPipe every W ends a chunk (ended_chunk), so the call follows it. At an iteration's start
  // the call follows whatever the rank ran last.
  return end_of_last_ != engine::kNone ? end_of_last_ : last_compute;
}

void PipelineCalls::ended_pass(bool forward, engine::OpId last_compute) {
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
