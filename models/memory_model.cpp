#include "models/memory_model.hpp"

#include <algorithm>
#include <variant>

#include "models/plans/pipeline_order.hpp"
#include "models/plans/tensor_parallelism.hpp"
#include "models/rank_layout.hpp"

namespace clustersim::models {

namespace {

// One stage's memory: the data-parallel strategy's model states and buffers, the activations
// tensor parallelism keeps per micro-batch times the micro-batches the pipeline holds in flight,
// and the pipeline's transfer buffers.
MemoryBreakdown stage_memory(const PlanContext& ctx, const TensorParallelism& tp,
                             const DataParallelStrategy& data_parallel, int stage) {
  const auto& p = ctx.parallel;
  const int pp = p.pp;
  const int v = p.virtual_stages;
  MemoryBreakdown m = data_parallel.memory(stage);

  std::vector<double> chunk_activation(static_cast<std::size_t>(v), 0.0);
  double largest_block = 0, recomputed_block = 0;
  for (int c = 0; c < v; ++c) {
    for (int li : ctx.chunks[static_cast<std::size_t>(c * pp + stage)]) {
      const LayerCost& l = ctx.layers[static_cast<std::size_t>(li)];
      chunk_activation[static_cast<std::size_t>(c)] += tp.kept_activation_bytes(l);
      // Full recompute re-runs a whole checkpointed block (attention + MLP) before its backward.
      if (TensorParallelism::recomputable(l)) {
        const bool same_block =
            l.block >= 0 && li > 0 && ctx.layers[static_cast<std::size_t>(li - 1)].block == l.block;
        recomputed_block = (same_block ? recomputed_block : 0.0) + tp.full_activation_bytes(l);
        largest_block = std::max(largest_block, recomputed_block);
      }
    }
  }

  // Micro-batches in flight, walked through this stage's schedule.
  double now = 0, peak = 0;
  for (const auto& step : pipeline_order(p.schedule, stage, pp, ctx.microbatches, v)) {
    now += (step.forward ? 1 : -1) * chunk_activation[static_cast<std::size_t>(step.chunk)];
    peak = std::max(peak, now);
  }
  m.activations = peak;
  if (ctx.training.recompute == Recompute::full) m.activations += largest_block;
  if (pp > 1 && ctx.transformer != nullptr) {
    // Send and receive buffers of one micro-batch's activation in each direction.
    m.buffers += 4.0 * ctx.training.micro_batch * ctx.seq_len() *
                 static_cast<double>(ctx.transformer->hidden_size) * ctx.element_bytes();
  }
  return m;
}

}  // namespace

std::string MemoryEstimate::largest_term() const {
  const std::pair<const char*, double> terms[] = {{"weights", peak.weights},
                                                  {"gradients", peak.gradients},
                                                  {"optimizer", peak.optimizer},
                                                  {"activations", peak.activations},
                                                  {"buffers", peak.buffers}};
  return std::max_element(std::begin(terms), std::end(terms),
                          [](const auto& a, const auto& b) { return a.second < b.second; })
      ->first;
}

MemoryEstimate estimate_memory(const Scenario& sc, const BuiltSchedule& built) {
  MemoryEstimate est;
  est.capacity = sc.cluster.gpu.memory_bytes;
  const RankLayout layout = rank_layout(sc.parallel);
  const PlanContext ctx = plan_context(sc, built.layers, built.partition, layout);
  const TensorParallelism tp(ctx);
  const auto data_parallel = make_data_parallel(sc.parallel.data_parallel, ctx, tp, nullptr);
  for (int stage = 0; stage < sc.parallel.pp; ++stage) {
    est.per_stage.push_back(stage_memory(ctx, tp, *data_parallel, stage));
    if (stage == 0 || est.per_stage.back().total() > est.peak.total()) {
      est.peak = est.per_stage.back();
      est.peak_stage = stage;
    }
  }
  RankCoords c;
  c.pp = est.peak_stage;
  est.peak_rank = layout.rank(c);
  return est;
}

}  // namespace clustersim::models
