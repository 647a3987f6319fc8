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

}  // namespace

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
  }
  return steps;
}

int peak_in_flight(const std::vector<PipelineStep>& steps) {
  int held = 0, peak = 0;
  for (const auto& s : steps) {
    held += s.forward ? 1 : -1;
    peak = std::max(peak, held);
  }
  return peak;
}

}  // namespace clustersim::models
