#include "models/memory_model.hpp"

#include <algorithm>
#include <variant>

#include "models/plans/expert_parallelism.hpp"
#include "models/plans/pipeline_order.hpp"
#include "models/rank_layout.hpp"

namespace clustersim::models {

namespace {

// Activation bytes one micro-batch leaves on this rank for the backward of `l` (Korthikanti).
class ActivationModel {
 public:
  explicit ActivationModel(const Scenario& sc)
      : sc_(sc), t_(std::get_if<TransformerSpec>(&sc.model.body)) {
    tp_ = sc.parallel.tp;
    sp_ = sc.parallel.sequence_parallel && tp_ > 1;
    s_ = std::max(1, sc.training.seq_len);
    scale_ = sc.training.micro_batch * bytes_per_element(sc.training.precision) / 2.0;
  }

  // Kept for backward (full recompute: the block input only).
  double kept(const LayerCost& l) const {
    if (sc_.training.recompute == Recompute::full && recomputable(l))
      return (t_ && l.name.ends_with(".attn")) ? 2.0 * s_ * h() / (sp_ ? tp_ : 1) * scale_ : 0.0;
    return full(l);
  }
  // Everything the layer's forward materializes (what full recompute brings back for one layer).
  double full(const LayerCost& l) const {
    if (!t_) return l.activation_bytes * scale_;
    double bytes = l.activation_bytes;
    if (l.name == "lm_head") {
      // 4·s·h of norm/projection inputs, 4·s·V of fp32 logits split over the vocabulary.
      const double logits = 4.0 * s_ * static_cast<double>(t_->vocab_size);
      const double rest = bytes - logits;
      return (rest / (sp_ ? tp_ : 1) + logits / tp_) * scale_;
    }
    if (l.name == "embedding") return bytes / (sp_ ? tp_ : 1) * scale_;
    if (sc_.training.recompute == Recompute::selective && l.name.ends_with(".attn"))
      bytes -= 5.0 * t_->num_heads * s_ * s_;
    // Per sublayer 5·s·h stay replicated under TP without SP: its input (2sh, the other 3sh of
    // Korthikanti's 10 are the norm input) and the dropout mask; the rest is split.
    const double replicated = sp_ ? 0.0 : std::min(bytes, 5.0 * s_ * h());
    return (replicated + (bytes - replicated) / tp_) * scale_;
  }
  bool recomputable(const LayerCost& l) const {
    return l.name != "embedding" && l.name != "lm_head";
  }

 private:
  double h() const { return t_ ? static_cast<double>(t_->hidden_size) : 0.0; }
  const Scenario& sc_;
  const TransformerSpec* t_;
  int tp_ = 1;
  bool sp_ = false;
  double s_ = 1;
  double scale_ = 1;
};

MemoryBreakdown stage_memory(const Scenario& sc, const BuiltSchedule& built, int stage) {
  const auto& p = sc.parallel;
  const int pp = p.pp;
  const int v = p.virtual_stages;
  const bool transformer = std::holds_alternative<TransformerSpec>(sc.model.body);
  const int elem = bytes_per_element(sc.training.precision);
  const ActivationModel act(sc);

  // Ψ: parameters this rank holds before data-parallel sharding; dense and expert apart, since
  // experts are replicated over dp / ep ranks only.
  double dense = 0, experts = 0, largest_unit = 0, largest_layer = 0, recomputed_block = 0;
  // FSDP units as the builder forms them: unit_blocks blocks (or list layers); the embedding and
  // the LM head alone.
  const int per_unit = std::max(1, p.fsdp.unit_blocks);
  long unit_key = -2;
  double unit_params = 0;
  std::vector<double> chunk_activation(static_cast<std::size_t>(v), 0.0);
  for (int c = 0; c < v; ++c) {
    for (int li : built.partition[static_cast<std::size_t>(c * pp + stage)]) {
      const LayerCost& l = built.layers[static_cast<std::size_t>(li)];
      double layer_params = 0;
      for (const auto& t : l.tensors) {
        const double local = transformer ? t.count / p.tp : t.count;
        if (expert_of(t) >= 0) {
          experts += local / p.ep;
          layer_params += local / p.ep;
        } else {
          dense += local;
          layer_params += local;
        }
      }
      const long key = !transformer   ? li / per_unit
                       : l.block >= 0 ? l.block / per_unit
                                      : -1000 - li;
      if (key != unit_key) unit_params = 0;
      unit_key = key;
      unit_params += layer_params;
      largest_unit = std::max(largest_unit, unit_params);
      chunk_activation[static_cast<std::size_t>(c)] += act.kept(l);
      // Full recompute re-runs a whole checkpointed block (attention + MLP) before its backward.
      if (act.recomputable(l)) {
        const bool same_block = l.block >= 0 && li > 0 &&
                                built.layers[static_cast<std::size_t>(li - 1)].block == l.block;
        recomputed_block = (same_block ? recomputed_block : 0.0) + act.full(l);
        largest_layer = std::max(largest_layer, recomputed_block);
      }
    }
  }

  MemoryBreakdown m;
  const double K = optimizer_state_bytes_per_param(sc.training.optimizer, sc.training.precision);
  const bool hsdp = p.data_parallel == DataParallel::hsdp;
  int gpus_per_node = sc.cluster.topology.node.gpus;
  const double shard_dense =
      hsdp ? (p.fsdp.shard_group > 0 ? p.fsdp.shard_group : gpus_per_node) : p.dp;
  const double shard_expert = std::max(1.0, shard_dense / p.ep);
  auto sharded = [&](double bytes_per_param) {
    return bytes_per_param * (dense / shard_dense + experts / shard_expert);
  };
  const double psi = dense + experts;
  switch (p.data_parallel) {
    case DataParallel::ddp:
      m.weights = elem * psi;
      m.gradients = elem * psi;
      m.optimizer = K * psi;
      // PyTorch DDP copies gradients into flat buckets (gradient_as_bucket_view=False).
      m.buffers = p.dp > 1 ? elem * psi : 0.0;
      break;
    case DataParallel::zero1:
      m.weights = elem * psi;
      m.gradients = elem * psi;
      m.optimizer = sharded(K);
      m.buffers = 2.0 * p.bucket_bytes;  // a reduce-scatter and an all-gather bucket
      break;
    case DataParallel::zero2:
      m.weights = elem * psi;
      m.gradients = sharded(elem);
      m.optimizer = sharded(K);
      m.buffers = 2.0 * p.bucket_bytes;
      break;
    case DataParallel::zero3:
    case DataParallel::fsdp:
    case DataParallel::hsdp: {
      m.weights = sharded(elem);
      m.gradients = sharded(elem);
      m.optimizer = sharded(K);
      // Gathered units in flight: the one computing plus the prefetched ones (the whole model
      // stays gathered between forward and backward without resharding), and one unit's
      // unsharded gradients before its reduce-scatter.
      const double unit = largest_unit;
      const double gathered =
          p.fsdp.reshard_after_forward
              ? unit * (1 + std::max(p.fsdp.prefetch, p.fsdp.forward_prefetch ? 1 : 0))
              : psi;
      m.buffers = elem * (gathered + unit);
      break;
    }
  }

  // Micro-batches in flight, walked through this stage's schedule.
  const auto order =
      pipeline_order(p.schedule, stage, pp, static_cast<int>(sc.num_microbatches()), v);
  std::vector<int> held(static_cast<std::size_t>(v), 0);
  double now = 0, peak = 0;
  for (const auto& step : order) {
    const auto c = static_cast<std::size_t>(step.chunk);
    held[c] += step.forward ? 1 : -1;
    now += (step.forward ? 1 : -1) * chunk_activation[c];
    peak = std::max(peak, now);
  }
  m.activations = peak;
  if (sc.training.recompute == Recompute::full) m.activations += largest_layer;
  if (pp > 1 && transformer) {
    // Send and receive buffers of one micro-batch's activation in each direction.
    const auto* t = std::get_if<TransformerSpec>(&sc.model.body);
    m.buffers += 4.0 * sc.training.micro_batch * std::max(1, sc.training.seq_len) *
                 static_cast<double>(t->hidden_size) * elem;
  }
  return m;
}

}  // namespace

double optimizer_state_bytes_per_param(Optimizer o, Precision p) {
  const bool mixed = bytes_per_element(p) < 4;
  const double moments = o == Optimizer::sgd ? 4.0 : 8.0;  // momentum, or Adam's m and v
  return moments + (mixed ? 4.0 : 0.0);
}

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
  for (int stage = 0; stage < sc.parallel.pp; ++stage) {
    est.per_stage.push_back(stage_memory(sc, built, stage));
    if (stage == 0 || est.per_stage.back().total() > est.peak.total()) {
      est.peak = est.per_stage.back();
      est.peak_stage = stage;
    }
  }
  const RankLayout layout(sc.parallel.tp, sc.parallel.ep, sc.parallel.dp, sc.parallel.pp,
                          sc.parallel.order);
  RankCoords c;
  c.pp = est.peak_stage;
  est.peak_rank = layout.rank(c);
  return est;
}

}  // namespace clustersim::models
