#include "models/plans/tensor_parallelism.hpp"

#include <algorithm>

#include "models/plans/layer_kernels.hpp"

namespace clustersim::models {

using engine::Category;
using engine::CollectiveType;
using engine::OpId;

TensorParallelism::TensorParallelism(const PlanContext& ctx, const LayerKernels* kernels)
    : ctx_(ctx),
      kernels_(kernels),
      moe_(ctx, kernels),
      tp_(ctx.parallel.tp),
      sequence_parallel_(ctx.parallel.sequence_parallel && ctx.parallel.tp > 1),
      elem_(ctx.element_bytes()),
      precision_(static_cast<std::uint8_t>(ctx.training.precision)) {
  const double hidden = ctx.transformer ? static_cast<double>(ctx.transformer->hidden_size) : 0.0;
  activation_bytes_ = static_cast<std::uint64_t>(static_cast<double>(ctx.training.micro_batch) *
                                                 ctx.seq_len() * hidden * elem_);
}

double TensorParallelism::local_params(const LayerCost& l, double count) const {
  // Norms are replicated in Megatron; they are < 0.1 % of a layer and counted as sharded here.
  return sharded(l) ? count / tp_ : count;
}

std::uint64_t TensorParallelism::boundary_bytes(const LayerCost& layer) const {
  if (ctx_.transformer != nullptr)
    return sequence_parallel_ ? activation_bytes_ / static_cast<std::uint64_t>(tp_)
                              : activation_bytes_;
  return static_cast<std::uint64_t>(layer.activation_bytes * ctx_.training.micro_batch * elem_ /
                                    2.0);
}

double TensorParallelism::recompute_flops(const LayerCost& layer) const {
  switch (ctx_.training.recompute) {
    case Recompute::none:
    case Recompute::selective_op:  // re-runs memory-bound kernels only: no FLOPs
      return 0.0;
    // Megatron checkpoints each layer's input and recomputes the layer; the embedding and the
    // logits are not recomputed.
    case Recompute::full:
      return recomputable(layer) ? layer.forward_flops : 0.0;
    case Recompute::selective: {
      if (ctx_.transformer == nullptr || layer.role != LayerRole::attention) return 0.0;
      const double s = ctx_.training.seq_len;
      return 4.0 * s * s * static_cast<double>(ctx_.transformer->hidden_size);  // QKᵀ and ·V
    }
  }
  return 0.0;
}

OpId TensorParallelism::forward_pass(engine::ScheduleBuilder& b, engine::Rank rank,
                                     engine::StreamId stream, const LayerGroups& groups, int layer,
                                     std::uint32_t mb, std::vector<OpId>& deps, Category category,
                                     double flops, const char* suffix, std::uint32_t kernels) {
  const LayerCost& l = ctx_.layers[static_cast<std::size_t>(layer)];
  const LayerRole role = l.role;
  const bool split = tp_ > 1 && sharded(l);
  const std::string base = l.name + " " + suffix;
  auto common = [&](Category cat, const std::string& name) {
    engine::ScheduleBuilder::Common c{rank, stream, cat, name, mb, deps};
    return c;
  };
  OpId last = engine::kNone;
  auto emitted = [&](OpId id) {
    last = id;
    deps.clear();
  };
  if (split && sequence_parallel_ && role != LayerRole::embedding)
    emitted(b.collective(common(Category::tp_comm, base + " tp all_gather"),
                         CollectiveType::all_gather, groups.tp, activation_bytes_));
  if (role == LayerRole::moe) {
    emitted(moe_.forward(b, rank, stream, groups.ep, l, mb, deps, category));
  } else {
    const double per_rank = split ? flops / tp_ : flops;
    const double bytes =
        (l.params * elem_ + l.memory_bytes * ctx_.training.micro_batch * elem_ / 2.0) /
        (split ? tp_ : 1);
    emitted(b.compute(common(category, base), per_rank * ctx_.training.micro_batch,
                      static_cast<std::uint64_t>(bytes), precision_, kernels));
  }
  if (!split) return last;
  switch (role) {
    case LayerRole::attention:
    case LayerRole::mlp:
    case LayerRole::moe:
    case LayerRole::embedding:
      emitted(b.collective(
          common(Category::tp_comm,
                 base + (sequence_parallel_ ? " tp reduce_scatter" : " tp all_reduce")),
          sequence_parallel_ ? CollectiveType::reduce_scatter : CollectiveType::all_reduce,
          groups.tp, activation_bytes_));
      break;
    case LayerRole::head:
      // Vocabulary-parallel cross-entropy: the logits' max and sum of exponentials, fp32.
      emitted(b.collective(
          common(Category::tp_comm, base + " tp all_reduce"), CollectiveType::all_reduce, groups.tp,
          static_cast<std::uint64_t>(2 * 4 * ctx_.training.micro_batch * ctx_.seq_len())));
      break;
    case LayerRole::generic:
      break;
  }
  return last;
}

OpId TensorParallelism::forward(engine::ScheduleBuilder& b, engine::Rank rank,
                                engine::StreamId stream, const LayerGroups& groups, int layer,
                                std::uint32_t mb, std::vector<OpId>& deps) {
  const LayerCost& l = ctx_.layers[static_cast<std::size_t>(layer)];
  return forward_pass(b, rank, stream, groups, layer, mb, deps, Category::forward, l.forward_flops,
                      "fwd", kernels_ != nullptr ? kernels_->forward(layer) : engine::kNone);
}

OpId TensorParallelism::backward(engine::ScheduleBuilder& b, engine::Rank rank,
                                 engine::StreamId stream, const LayerGroups& groups, int layer,
                                 std::uint32_t mb, std::vector<OpId>& deps, OpId* weight_grads) {
  const LayerCost& l = ctx_.layers[static_cast<std::size_t>(layer)];
  const bool split = tp_ > 1 && sharded(l);
  const double extra = recompute_flops(l);
  const std::uint32_t recompute = kernels_ != nullptr ? kernels_->recompute(layer) : engine::kNone;
  // selective_op re-runs the layer's elementwise kernels (no FLOPs; its kernel list has them).
  const bool elementwise =
      ctx_.training.recompute == Recompute::selective_op && recompute != engine::kNone;
  if (extra > 0 || elementwise) {
    if (ctx_.training.recompute == Recompute::full) {
      // Full recompute re-runs the layer's forward, collectives included.
      forward_pass(b, rank, stream, groups, layer, mb, deps, Category::recompute, extra,
                   "recompute", recompute);
    } else {
      const double per_rank = split ? extra / tp_ : extra;
      b.compute({rank, stream, Category::recompute, l.name + " recompute", mb, deps},
                per_rank * ctx_.training.micro_batch, 0, precision_, recompute);
      deps.clear();
    }
  }
  const std::string base = l.name + " bwd";
  OpId last = engine::kNone;
  auto common = [&](Category cat, const std::string& name) {
    return engine::ScheduleBuilder::Common{rank, stream, cat, name, mb, deps};
  };
  // With sequence parallelism every sharded layer starts its backward with an all-gather: the
  // conjugate of the embedding's reduce-scatter, the re-gathered input elsewhere.
  if (split && sequence_parallel_) {
    last = b.collective(common(Category::tp_comm, base + " tp all_gather"),
                        CollectiveType::all_gather, groups.tp, activation_bytes_);
    deps.clear();
  }
  if (l.role == LayerRole::moe) {
    last = moe_.backward(b, rank, stream, groups.ep, l, mb, deps, weight_grads);
  } else {
    const double bytes =
        2.0 * (l.params * elem_ + l.memory_bytes * ctx_.training.micro_batch * elem_ / 2.0) /
        (split ? tp_ : 1);
    last =
        b.compute(common(Category::backward, base),
                  (split ? l.backward_flops / tp_ : l.backward_flops) * ctx_.training.micro_batch,
                  static_cast<std::uint64_t>(bytes), precision_,
                  kernels_ != nullptr ? kernels_->backward(layer) : engine::kNone);
    *weight_grads = last;
  }
  deps.clear();
  if (split && l.role != LayerRole::embedding) {
    last = b.collective(
        common(Category::tp_comm,
               base + (sequence_parallel_ ? " tp reduce_scatter" : " tp all_reduce")),
        sequence_parallel_ ? CollectiveType::reduce_scatter : CollectiveType::all_reduce, groups.tp,
        activation_bytes_);
  }
  return last;
}

}  // namespace clustersim::models
