// DualPipe's order of passes on one rank (DeepSeek-V3 technical report §3.2.1 and Figure 5; the
// step list of deepseek-ai/DualPipe's DualPipe.step). Two pipelines run through the same ranks
// in opposite directions: rank s runs stage s of the forward direction and stage p − 1 − s of
// the reverse one, so each rank holds two stages' parameters. Half the micro-batches enter at
// rank 0, half at rank p − 1. A rank's "near" direction is the one that enters at its end of
// the line (forward for the first half of the ranks, reverse for the second half), its "far"
// direction the other. With h = min(s, p − 1 − s), P = p/2 and M = m/2, the eight phases are:
//   1. 2(P − h − 1) near forwards
//   2. h + 1 times: a near forward, a far forward
//   3. P − h − 1 times: a far B (W deferred), a deferred W, a far forward
//   4. M − p + h + 1 times: the pair (near F, far B) and the pair (far F, near B), each an F&B
//      (a middle rank, h = P − 1, runs the first round's near F and far B apart, as dualpipe.py)
//   5. P − h − 1 times: a far B, the pair (far F, near B)
//   6. h + 1 times: a far B, a near B (from the middle of this phase on, their W deferred)
//   7. P − h − 1 times: a deferred W, a near B (W deferred)
//   8. h + 1 deferred Ws
// Deferred Ws run in the order their Bs ran (first in, first out); every other B is a full
// backward: its W step follows at once. Passes of one direction run their micro-batches in
// order, which is what keeps the point-to-point streams matched (training_schedule.cpp).
#include <algorithm>
#include <deque>
#include <stdexcept>

#include "models/plans/pipeline_order.hpp"

namespace clustersim::models {

namespace {

class DualPipeSteps {
 public:
  DualPipeSteps(int stage, int stages, int microbatches)
      : near_(stage < stages / 2 ? 0 : 1), half_m_(microbatches / 2) {}

  // The direction (0: forward, 1: reverse) of side 0 (near) or side 1 (far).
  int direction(int side) const { return near_ ^ side; }

  void forward(int side) {
    const int d = direction(side);
    steps_.push_back({true, microbatch(d, next_f_[d]++), d, false});
  }
  // A backward; `deferred`: its W waits in the queue for a weight() step, else it runs now.
  void backward(int side, bool deferred) {
    const int d = direction(side);
    const PipelineStep b{false, microbatch(d, next_b_[d]++), d, false};
    steps_.push_back(b);
    if (deferred) {
      waiting_.push_back(b);
    } else {
      PipelineStep w{false, b.microbatch, d, true};
      w.in_chunk_before = true;  // one chunk with its B: dualpipe.py's full backward
      steps_.push_back(w);
    }
  }
  void weight() {
    if (waiting_.empty()) throw std::logic_error("dualpipe order: W without a deferred B");
    PipelineStep w = waiting_.front();
    waiting_.pop_front();
    w.weight = true;
    steps_.push_back(w);
  }
  // dualpipe.py posts the last pass's sends only after the chunk that follows it.
  void hold_sends() { steps_.back().send_held = true; }
  // dualpipe.py appends step i's receive after step `pass`, for the call after it.
  void receive_after(std::size_t i, std::size_t pass) {
    steps_[i].recv_after_pass = static_cast<int>(pass);
  }
  std::size_t size() const { return steps_.size(); }
  // The F&B pair: the forward of one micro-batch and the full backward of another.
  void pair(int forward_side, int backward_side) {
    forward(forward_side);
    steps_.back().paired = true;
    backward(backward_side, false);
  }

  std::vector<PipelineStep> finish() {
    if (!waiting_.empty()) throw std::logic_error("dualpipe order: a deferred W never ran");
    return std::move(steps_);
  }

 private:
  int microbatch(int d, int k) const { return d * half_m_ + k; }

  int near_;
  int half_m_;
  int next_f_[2] = {0, 0};
  int next_b_[2] = {0, 0};
  std::deque<PipelineStep> waiting_;
  std::vector<PipelineStep> steps_;
};

}  // namespace

std::vector<PipelineStep> dualpipe_order(int stage, int stages, int microbatches) {
  if (stages < 2 || stages % 2 != 0 || microbatches % 2 != 0 || microbatches < 2 * stages)
    throw std::invalid_argument(
        "dualpipe order: needs an even pp >= 2 and an even number of "
        "micro-batches >= 2 · pp");
  constexpr int kNear = 0, kFar = 1;
  const int half = stages / 2;
  const int h = std::min(stage, stages - 1 - stage);
  const int rest = half - h - 1;  // P − h − 1
  DualPipeSteps s(stage, stages, microbatches);
  for (int i = 0; i < 2 * rest; ++i)
    s.forward(kNear);
  // Step 2: a rank off the middle sends each near forward's output after the far forward that
  // follows it; the middle rank sends its last far forward's after the next chunk (step 4).
  const bool middle = rest == 0;
  // Each near forward's receive but the first is appended after the near forward before it (for
  // the far forward's call), and so is that of step 4's first near forward.
  std::size_t last_near = 0;
  for (int i = 0; i <= h; ++i) {
    s.forward(kNear);
    if (i > 0) s.receive_after(s.size() - 1, last_near);
    last_near = s.size() - 1;
    if (!middle) s.hold_sends();
    s.forward(kFar);
    if (middle && i == h) s.hold_sends();
  }
  // Step 3 appends each far forward's receive after the B, for the W's call.
  for (int i = 0; i < rest; ++i) {
    s.backward(kFar, true);
    s.weight();
    s.forward(kFar);
    s.receive_after(s.size() - 1, s.size() - 3);
  }
  for (int i = 0; i < microbatches / 2 - stages + h + 1; ++i) {
    const std::size_t near_forward = s.size();
    if (i == 0 && middle) {
      // The middle rank runs its first two passes apart ("to further reduce bubble size"):
      // the near forward, whose sends go after the far full backward that follows it.
      s.forward(kNear);
      s.hold_sends();
      s.backward(kFar, false);
    } else {
      s.pair(kNear, kFar);
    }
    if (i == 0) s.receive_after(near_forward, last_near);
    s.pair(kFar, kNear);
  }
  for (int i = 0; i < rest; ++i) {
    s.backward(kFar, false);
    s.pair(kFar, kNear);
  }
  // The cool-down's two backwards per round: the later half defers W (an odd h switches before
  // the far B of the middle round, an even h between its two Bs), so that h + 1 Ws remain.
  bool defer = false;
  for (int i = 0; i <= h; ++i) {
    if (i == (h + 1) / 2 && h % 2 == 1) defer = true;
    s.backward(kFar, defer);
    if (i == (h + 1) / 2 && h % 2 == 0) defer = true;
    s.backward(kNear, defer);
  }
  for (int i = 0; i < rest; ++i) {
    s.weight();
    s.backward(kNear, true);
  }
  for (int i = 0; i <= h; ++i)
    s.weight();
  return s.finish();
}

}  // namespace clustersim::models
