#include "models/schedule_builder.hpp"

#include <variant>

namespace clustersim::models {

BuiltSchedule build_training_schedule(const Scenario& scenario);

double recompute_flops(const Scenario& sc, const LayerCost& layer) {
  switch (sc.training.recompute) {
    case Recompute::none:
      return 0.0;
    // Megatron checkpoints each layer's input and recomputes the layer; the embedding and the
    // logits are not recomputed.
    case Recompute::full:
      return layer.name == "embedding" || layer.name == "lm_head" ? 0.0 : layer.forward_flops;
    case Recompute::selective: {
      const auto* t = std::get_if<TransformerSpec>(&sc.model.body);
      const bool attention = layer.block >= 0 && layer.name.ends_with(".attn");
      if (t == nullptr || !attention) return 0.0;
      const double s = sc.training.seq_len;
      return 4.0 * s * s * static_cast<double>(t->hidden_size);  // QKᵀ and attention·V
    }
  }
  return 0.0;
}

BuiltSchedule build_schedule(const Scenario& sc) {
  return build_training_schedule(sc);
}

}  // namespace clustersim::models
