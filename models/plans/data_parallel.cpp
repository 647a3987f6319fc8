// What every data-parallel strategy shares: a rank's local parameters and the strategy factory.
#include "models/plans/data_parallel.hpp"

#include <algorithm>

#include "models/plans/ddp.hpp"
#include "models/plans/sharded_data_parallel.hpp"
#include "models/plans/tensor_parallelism.hpp"

namespace clustersim::models {

LayerCost local_shard(const LayerCost& layer, const TensorParallelism& tp, int num_experts, int ep,
                      int ep_index) {
  LayerCost shard = layer;
  if (num_experts > 0) {
    shard = select_tensors(layer, false, num_experts, ep, ep_index);
    const LayerCost own = select_tensors(layer, true, num_experts, ep, ep_index);
    shard.tensors.insert(shard.tensors.end(), own.tensors.begin(), own.tensors.end());
    shard.params += own.params;
  }
  double params = 0;
  for (auto& t : shard.tensors) {
    t.count = tp.local_count(shard, t);
    params += t.count;
  }
  shard.params = params;
  return shard;
}

StageParameters stage_parameters(const PlanContext& ctx, int stage) {
  StageParameters out;
  const int tp = ctx.transformer != nullptr ? ctx.parallel.tp : 1;
  ctx.for_each_stage_layer(stage, [&](int li) {
    for (const auto& t : ctx.layers[static_cast<std::size_t>(li)].tensors) {
      const double local = tp_local_count(t, tp);
      if (t.expert >= 0)
        out.experts += local / ctx.parallel.ep;
      else
        out.dense += local;
    }
  });
  return out;
}

std::vector<LayerCost> local_layers(const PlanContext& ctx, const TensorParallelism& tp,
                                    engine::Rank rank, bool experts, std::vector<int>* index) {
  const auto c0 = ctx.layout.coords(rank);
  const int num_experts = ctx.num_experts();
  std::vector<LayerCost> local;
  ctx.for_each_stage_layer(c0.pp, [&](int l) {
    LayerCost shard = local_shard(ctx.layers[static_cast<std::size_t>(l)], tp, num_experts,
                                  ctx.parallel.ep, c0.ep);
    if (num_experts > 0)
      shard = select_tensors(shard, experts, num_experts, ctx.parallel.ep, c0.ep);
    else if (experts)
      shard.tensors.clear(), shard.params = 0;
    local.push_back(std::move(shard));
    if (index) index->push_back(l);
  });
  return local;
}

bool keeps_master_weights(const TrainingConfig& t) {
  return bytes_per_element(t.precision) < 4 && t.master_weights;
}

double optimizer_state_bytes_per_param(const TrainingConfig& t) {
  const bool mixed = keeps_master_weights(t);
  // Adam's m and v; SGD's momentum buffer, which torch.optim.SGD keeps only with momentum != 0.
  const double moments = t.optimizer != Optimizer::sgd ? 2.0 : t.momentum > 0 ? 1.0 : 0.0;
  // Autocast: the fp32 parameters are the master, the states fp32 (HF: "18 bytes per model
  // parameter": 6 for fp32 + 16-bit weights, 4 for fp32 gradients, 8 for AdamW's states).
  if (mixed && t.amp) return moments * 4.0;
  // fp32 states with a master copy or fp32 training; the weights' dtype in pure 16-bit training.
  const double state = mixed ? 4.0 : std::max(2, bytes_per_element(t.precision));
  return moments * state + (mixed ? 4.0 : 0.0);
}

std::unique_ptr<DataParallelStrategy> make_data_parallel(DataParallel kind, const PlanContext& ctx,
                                                         const TensorParallelism& tp,
                                                         ScheduleSink* sink) {
  switch (kind) {
    case DataParallel::ddp:
      return std::make_unique<Ddp>(ctx, tp, sink);
    case DataParallel::zero1:
    case DataParallel::zero2:
    case DataParallel::zero3:
    case DataParallel::fsdp:
    case DataParallel::hsdp:
      return std::make_unique<ShardedDataParallel>(kind, ctx, tp, sink);
  }
  return nullptr;
}

}  // namespace clustersim::models
