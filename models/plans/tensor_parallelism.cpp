#include "models/plans/layer_parallelism.hpp"

#include <variant>

#include "models/schedule_builder.hpp"

namespace clustersim::models {

using engine::Category;
using engine::CollectiveType;
using engine::OpId;

LayerParallelism::LayerParallelism(const Scenario& sc, const std::vector<LayerCost>& layers)
    : sc_(sc),
      layers_(layers),
      moe_(sc),
      tp_(sc.parallel.tp),
      sequence_parallel_(sc.parallel.sequence_parallel && sc.parallel.tp > 1),
      elem_(bytes_per_element(sc.training.precision)),
      precision_(static_cast<std::uint8_t>(sc.training.precision)) {
  const auto* t = std::get_if<TransformerSpec>(&sc.model.body);
  transformer_ = t != nullptr;
  const double hidden = t ? static_cast<double>(t->hidden_size) : 0.0;
  activation_bytes_ = static_cast<std::uint64_t>(static_cast<double>(sc.training.micro_batch) *
                                                 std::max(1, sc.training.seq_len) * hidden * elem_);
  if (tp_ > 1 && !transformer_)
    sc.fail("parallel.tp",
            "tensor parallelism needs a transformer model; a layer list cannot be split");
}

LayerParallelism::Kind LayerParallelism::kind(const LayerCost& l) const {
  if (!transformer_) return Kind::other;
  if (l.name == "embedding") return Kind::embedding;
  if (l.name == "lm_head") return Kind::head;
  if (l.name.ends_with(".attn")) return Kind::attention;
  if (l.name.ends_with(".mlp")) return Kind::mlp;
  return Kind::other;
}

bool LayerParallelism::sharded(const LayerCost& l) const {
  return kind(l) != Kind::other;
}

double LayerParallelism::local_params(const LayerCost& l, double count) const {
  // Norms are replicated in Megatron; they are < 0.1 % of a layer and counted as sharded here.
  return sharded(l) ? count / tp_ : count;
}

std::uint64_t LayerParallelism::boundary_bytes() const {
  if (!transformer_) {
    return 0;  // layer lists: set by the caller from activation sizes
  }
  return sequence_parallel_ ? activation_bytes_ / static_cast<std::uint64_t>(tp_)
                            : activation_bytes_;
}

OpId LayerParallelism::forward_pass(engine::ScheduleBuilder& b, engine::Rank rank,
                                    engine::StreamId stream, const LayerGroups& groups, int layer,
                                    std::uint32_t mb, std::vector<OpId>& deps, Category category,
                                    double flops, const char* suffix) {
  const LayerCost& l = layers_[static_cast<std::size_t>(layer)];
  const Kind k = kind(l);
  const bool split = tp_ > 1 && k != Kind::other;
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
  if (split && sequence_parallel_ && (k == Kind::attention || k == Kind::mlp || k == Kind::head))
    emitted(b.collective(common(Category::tp_comm, base + " tp all_gather"),
                         CollectiveType::all_gather, groups.tp, activation_bytes_));
  if (moe_.is_moe(l)) {
    emitted(moe_.forward(b, rank, stream, groups.ep, l, mb, deps, category));
  } else {
    const double per_rank = split ? flops / tp_ : flops;
    const double bytes =
        (l.params * elem_ + l.memory_bytes * sc_.training.micro_batch * elem_ / 2.0) /
        (split ? tp_ : 1);
    emitted(b.compute(common(category, base), per_rank * sc_.training.micro_batch,
                      static_cast<std::uint64_t>(bytes), precision_));
  }
  if (!split) return last;
  switch (k) {
    case Kind::attention:
    case Kind::mlp:
    case Kind::embedding:
      emitted(b.collective(
          common(Category::tp_comm,
                 base + (sequence_parallel_ ? " tp reduce_scatter" : " tp all_reduce")),
          sequence_parallel_ ? CollectiveType::reduce_scatter : CollectiveType::all_reduce,
          groups.tp, activation_bytes_));
      break;
    case Kind::head:
      // Vocabulary-parallel cross-entropy: the logits' max and sum of exponentials, fp32.
      emitted(b.collective(common(Category::tp_comm, base + " tp all_reduce"),
                           CollectiveType::all_reduce, groups.tp,
                           static_cast<std::uint64_t>(2 * 4 * sc_.training.micro_batch *
                                                      std::max(1, sc_.training.seq_len))));
      break;
    case Kind::other:
      break;
  }
  return last;
}

OpId LayerParallelism::forward(engine::ScheduleBuilder& b, engine::Rank rank,
                               engine::StreamId stream, const LayerGroups& groups, int layer,
                               std::uint32_t mb, std::vector<OpId>& deps) {
  const LayerCost& l = layers_[static_cast<std::size_t>(layer)];
  return forward_pass(b, rank, stream, groups, layer, mb, deps, Category::forward, l.forward_flops,
                      "fwd");
}

OpId LayerParallelism::backward(engine::ScheduleBuilder& b, engine::Rank rank,
                                engine::StreamId stream, const LayerGroups& groups, int layer,
                                std::uint32_t mb, std::vector<OpId>& deps, OpId* weight_grads) {
  const LayerCost& l = layers_[static_cast<std::size_t>(layer)];
  const Kind k = kind(l);
  const bool split = tp_ > 1 && k != Kind::other;
  const double extra = recompute_flops(sc_, l);
  if (extra > 0) {
    if (sc_.training.recompute == Recompute::full) {
      // Full recompute re-runs the layer's forward, collectives included.
      forward_pass(b, rank, stream, groups, layer, mb, deps, Category::recompute, extra,
                   "recompute");
    } else {
      const double per_rank = split ? extra / tp_ : extra;
      b.compute({rank, stream, Category::recompute, l.name + " recompute", mb, deps},
                per_rank * sc_.training.micro_batch, 0, precision_);
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
  if (moe_.is_moe(l)) {
    last = moe_.backward(b, rank, stream, groups.ep, l, mb, deps, weight_grads);
  } else {
    const double bytes =
        2.0 * (l.params * elem_ + l.memory_bytes * sc_.training.micro_batch * elem_ / 2.0) /
        (split ? tp_ : 1);
    last = b.compute(common(Category::backward, base),
                     (split ? l.backward_flops / tp_ : l.backward_flops) * sc_.training.micro_batch,
                     static_cast<std::uint64_t>(bytes), precision_);
    *weight_grads = last;
  }
  deps.clear();
  if (split && (k == Kind::attention || k == Kind::mlp || k == Kind::head)) {
    last = b.collective(
        common(Category::tp_comm,
               base + (sequence_parallel_ ? " tp reduce_scatter" : " tp all_reduce")),
        sequence_parallel_ ? CollectiveType::reduce_scatter : CollectiveType::all_reduce, groups.tp,
        activation_bytes_);
  }
  return last;
}

}  // namespace clustersim::models
