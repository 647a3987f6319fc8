#include "models/memory_model.hpp"

#include <algorithm>
#include <variant>

namespace clustersim::models {

namespace {

// Optimizer state per parameter. Mixed precision keeps an fp32 master copy besides the moments.
double optimizer_bytes_per_param(Optimizer o, Precision p) {
  const bool mixed = bytes_per_element(p) < 4;
  const double moments = o == Optimizer::sgd ? 4.0 : 8.0;  // momentum, or Adam's m and v
  return moments + (mixed ? 4.0 : 0.0);
}

// Activations kept for the backward of one micro-batch, in bytes.
double activation_bytes(const Scenario& sc, const std::vector<LayerCost>& layers) {
  const double scale = sc.training.micro_batch * bytes_per_element(sc.training.precision) / 2.0;
  const auto* t = std::get_if<TransformerSpec>(&sc.model.body);
  double kept = 0.0;
  double largest = 0.0;
  for (const auto& l : layers) {
    const bool recomputable = l.name != "embedding" && l.name != "lm_head";
    double bytes = l.activation_bytes;
    largest = std::max(largest, recomputable ? bytes : 0.0);
    if (sc.training.recompute == Recompute::full && recomputable) {
      // Only each block's input survives (2·s·h bytes per sample, 16-bit); layer lists keep none.
      bytes = (t != nullptr && l.name.ends_with(".attn"))
                  ? 2.0 * sc.training.seq_len * static_cast<double>(t->hidden_size)
                  : 0.0;
    } else if (sc.training.recompute == Recompute::selective && t != nullptr &&
               l.name.ends_with(".attn")) {
      // The attention core's 5·a·s² bytes are recomputed instead of stored.
      const double s = sc.training.seq_len;
      bytes -= 5.0 * t->num_heads * s * s;
    }
    kept += bytes;
  }
  // Full recompute re-materializes one layer at a time during backward.
  if (sc.training.recompute == Recompute::full) kept += largest;
  return kept * scale;
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
  const double params = total_params(built.layers);
  const int elem = bytes_per_element(sc.training.precision);
  MemoryEstimate est;
  est.capacity = sc.cluster.gpu.memory_bytes;
  est.peak.weights = params * elem;
  est.peak.gradients = params * elem;
  est.peak.optimizer =
      params * optimizer_bytes_per_param(sc.training.optimizer, sc.training.precision);
  est.peak.activations = activation_bytes(sc, built.layers);
  // PyTorch DDP copies gradients into flat bucket buffers (gradient_as_bucket_view=False, the
  // default), so the buckets add one more gradient copy.
  for (const auto& bucket : built.buckets)
    est.peak.buffers += static_cast<double>(bucket.bytes);
  est.peak_rank = 0;  // every DDP rank holds the same
  return est;
}

}  // namespace clustersim::models
