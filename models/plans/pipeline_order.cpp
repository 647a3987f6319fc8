#include "models/plans/pipeline_order.hpp"

#include <algorithm>
#include <stdexcept>

namespace clustersim::models {

namespace {

// Megatron's interleaved schedule numbers "virtual micro-batches" k = 0 .. m·v−1: groups of p
// micro-batches cycle through the chunks. Forward k runs chunk (k / p) mod v; backward k runs the
// chunks in reverse.
PipelineStep virtual_step(int k, bool forward, int stages, int chunks) {
  const int group = k / stages;
  int chunk = group % chunks;
  if (!forward) chunk = chunks - 1 - chunk;
  const int microbatch = (k / (stages * chunks)) * stages + k % stages;
  return {forward, microbatch, chunk};
}

// Qi et al. 2024 ("Zero Bubble Pipeline Parallelism", §3.1): stage i of p runs, for x = 0, 1, ...
// the triple (F_x, B_{x - lag_b}, W_{x - lag_w}), each pass present when its micro-batch is in
// [0, m): ZB-H1 with lag_b = p − 1 − i and lag_w = p − 1 (the warm-up of 1F1B, W delayed to fill
// the bubble, at most p micro-batches held at stage 0, as 1F1B), ZB-H2 with twice both lags (more
// warm-up forwards, about twice 1F1B's activations, no bubble in the steady state).
std::vector<PipelineStep> zero_bubble_order(int stage, int stages, int m, int factor) {
  const int lag_b = factor * (stages - 1 - stage);
  const int lag_w = factor * (stages - 1);
  std::vector<PipelineStep> steps;
  for (int x = 0; x < m + lag_w; ++x) {
    if (x < m) steps.push_back({true, x, 0, false});
    if (x - lag_b >= 0 && x - lag_b < m) steps.push_back({false, x - lag_b, 0, false});
    if (x - lag_w >= 0 && x - lag_w < m) steps.push_back({false, x - lag_w, 0, true});
  }
  return steps;
}

}  // namespace

bool splits_backward(PipelineSchedule schedule) {
  return schedule == PipelineSchedule::zb_h1 || schedule == PipelineSchedule::zb_h2 ||
         schedule == PipelineSchedule::dualpipe;
}

std::vector<PipelineStep> pipeline_order(PipelineSchedule schedule, int stage, int stages,
                                         int microbatches, int chunks) {
  if (stages < 1 || stage < 0 || stage >= stages || microbatches < 1 || chunks < 1)
    throw std::invalid_argument("pipeline order: bad stage/micro-batch/chunk counts");
  std::vector<PipelineStep> steps;
  const int m = microbatches;
  switch (schedule) {
    case PipelineSchedule::gpipe:
      for (int i = 0; i < m; ++i)
        steps.push_back({true, i, 0});
      for (int i = 0; i < m; ++i)
        steps.push_back({false, i, 0});
      return steps;
    case PipelineSchedule::one_f_one_b: {
      const int warmup = std::min(stages - stage - 1, m);
      int f = 0, b = 0;
      for (; f < warmup; ++f)
        steps.push_back({true, f, 0});
      while (f < m) {
        steps.push_back({true, f++, 0});
        steps.push_back({false, b++, 0});
      }
      while (b < m)
        steps.push_back({false, b++, 0});
      return steps;
    }
    case PipelineSchedule::interleaved: {
      if (m % stages != 0)
        throw std::invalid_argument("interleaved schedule: micro-batches must be a multiple of pp");
      const int total = m * chunks;
      // Megatron-LM: (p − s − 1)·2 + (v − 1)·p warm-up forwards.
      const int warmup = std::min((stages - stage - 1) * 2 + (chunks - 1) * stages, total);
      int f = 0, b = 0;
      for (; f < warmup; ++f)
        steps.push_back(virtual_step(f, true, stages, chunks));
      while (f < total) {
        steps.push_back(virtual_step(f++, true, stages, chunks));
        steps.push_back(virtual_step(b++, false, stages, chunks));
      }
      while (b < total)
        steps.push_back(virtual_step(b++, false, stages, chunks));
      return steps;
    }
    case PipelineSchedule::zb_h1:
      return zero_bubble_order(stage, stages, m, 1);
    case PipelineSchedule::zb_h2:
      return zero_bubble_order(stage, stages, m, 2);
    case PipelineSchedule::dualpipe:
      return dualpipe_order(stage, stages, m);
  }
  return steps;
}

int peak_in_flight(const std::vector<PipelineStep>& steps) {
  const bool split =
      std::any_of(steps.begin(), steps.end(), [](const PipelineStep& s) { return s.weight; });
  int held = 0, peak = 0;
  for (const auto& s : steps) {
    held += s.forward ? 1 : (s.weight || !split ? -1 : 0);
    peak = std::max(peak, held);
  }
  return peak;
}

}  // namespace clustersim::models
