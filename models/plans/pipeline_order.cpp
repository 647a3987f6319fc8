#include "models/plans/pipeline_order.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <stdexcept>
#include <utility>

namespace clustersim::models {

namespace {

// Megatron-Core's interleaved schedule table (schedules.py, get_schedule_table): the
// micro-batches in groups of g, each group run through chunk 0, then chunk 1, ..., the last group
// taking what is left. Virtual micro-batch k forwards table[k]; backward k runs table[k]'s
// micro-batch through the chunks in reverse.
std::vector<PipelineStep> interleaved_table(int m, int chunks, int group) {
  std::vector<PipelineStep> table;
  table.reserve(static_cast<std::size_t>(m) * static_cast<std::size_t>(chunks));
  for (int first = 0; first < m; first += group) {
    const int last = first + group >= m ? m : first + group;
    for (int chunk = 0; chunk < chunks; ++chunk)
      for (int mb = first; mb < last; ++mb)
        table.push_back({true, mb, chunk});
  }
  return table;
}

// Megatron-Core's leading stage (the first for forwards, the last for backwards; schedules.py,
// recv_tensor_from_previous_stage): after its pass k of a direction it receives what the ending
// stage produced at its pass k − (p − 1) of that direction. With groups of pp micro-batches that
// is the next pass's input; with larger groups it arrives ahead of the pass that consumes it.
// `produced(j)`: the step (micro-batch, chunk) whose input the ending stage's pass j carries, or
// none (the last chunk of the direction produces nothing).
template <typename Produced>
void align_leading_receives(std::vector<PipelineStep>& steps, bool forward, int stages, int total,
                            Produced produced) {
  std::vector<std::size_t> pass;                  // the step index of the rank's pass k
  std::map<std::pair<int, int>, std::size_t> at;  // (micro-batch, chunk) -> its step index
  for (std::size_t i = 0; i < steps.size(); ++i)
    if (steps[i].forward == forward) {
      pass.push_back(i);
      at.emplace(std::pair{steps[i].microbatch, steps[i].chunk}, i);
    }
  for (int k = stages - 1; k < total; ++k) {
    const auto consumer = produced(k - (stages - 1));
    if (!consumer) continue;
    const std::size_t i = at.at(*consumer);
    const std::size_t after = pass[static_cast<std::size_t>(k)];
    if (call_after(steps, after) > i)
      throw std::logic_error("interleaved order: a receive after its pass");
    steps[i].recv_after_pass = static_cast<int>(after);
  }
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

std::size_t call_after(const std::vector<PipelineStep>& steps, std::size_t i) {
  std::size_t c = i + 1;
  while (c < steps.size() && steps[c].in_chunk_before)
    ++c;
  return c;
}

bool splits_backward(PipelineSchedule schedule) {
  return schedule == PipelineSchedule::zb_h1 || schedule == PipelineSchedule::zb_h2 ||
         schedule == PipelineSchedule::dualpipe;
}

std::vector<PipelineStep> pipeline_order(PipelineSchedule schedule, int stage, int stages,
                                         int microbatches, int chunks, int group) {
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
      const int g = group > 0 ? group : stages;
      if (g < stages || (m % g != 0 && m % g < stages))
        throw std::invalid_argument(
            "interleaved schedule: micro-batch groups of fewer than pp micro-batches");
      const std::vector<PipelineStep> table = interleaved_table(m, chunks, g);
      auto backward = [&](int k) {
        PipelineStep s = table[static_cast<std::size_t>(k)];
        s.forward = false;
        s.chunk = chunks - 1 - s.chunk;
        return s;
      };
      const int total = m * chunks;
      // Megatron-Core: (p − s − 1)·2 + (v − 1)·g warm-up forwards.
      const int warmup = std::min((stages - stage - 1) * 2 + (chunks - 1) * g, total);
      int f = 0, b = 0;
      for (; f < warmup; ++f)
        steps.push_back(table[static_cast<std::size_t>(f)]);
      // Without overlap_p2p_comm Megatron runs a steady step's forward and backward back to back
      // and then one call (send_forward_backward_recv_forward_backward) sends both passes'
      // outputs and receives the next step's inputs. Either way a backward's gradient is received
      // after the backward before it, the first after the warm-up's last forward.
      int after = static_cast<int>(steps.size()) - 1;
      while (f < total) {
        steps.push_back(table[static_cast<std::size_t>(f++)]);
        PipelineStep bw = backward(b++);
        bw.in_chunk_before = true;
        bw.recv_after_pass = after;
        steps.push_back(bw);
        after = static_cast<int>(steps.size()) - 1;
      }
      while (b < total)
        steps.push_back(backward(b++));
      using PassOrNone = std::optional<std::pair<int, int>>;  // (micro-batch, chunk)
      if (stage == 0)  // forwards of chunk c + 1 take the last stage's chunk c
        align_leading_receives(steps, true, stages, total, [&](int j) -> PassOrNone {
          const PipelineStep& t = table[static_cast<std::size_t>(j)];
          if (t.chunk == chunks - 1) return std::nullopt;
          return std::pair{t.microbatch, t.chunk + 1};
        });
      if (stage == stages - 1)  // backwards of chunk c − 1 take the first stage's chunk c
        align_leading_receives(steps, false, stages, total, [&](int j) -> PassOrNone {
          const PipelineStep s = backward(j);
          if (s.chunk == 0) return std::nullopt;
          return std::pair{s.microbatch, s.chunk - 1};
        });
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
