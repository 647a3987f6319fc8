// The plan search's compute costs by the kernel model (docs/plan-search.md "Ranking"): what one
// micro-batch of a transformer's layers takes on one rank, from the same kernel lists and
// per-kernel costs the simulation uses (models/kernels/), so that the closed-form estimate and
// the flow re-simulation agree on compute. Lists are built and costed once per distinct layer
// shape (tp, cp, sequence parallelism, micro-batch, ep, ...), not once per plan: a search of
// thousands of plans meets a few dozen shapes.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <tuple>

#include "models/scenario.hpp"

namespace clustersim::models {

// Seconds of one micro-batch on one rank, per layer of each kind.
struct LayerKernelSeconds {
  double attention_forward = 0, attention_backward = 0;
  double mlp_forward = 0, mlp_backward = 0;  // a dense MLP block
  double moe_forward = 0, moe_backward = 0;  // an MoE block's MLP (0 for a dense model)
  double embedding_forward = 0, embedding_backward = 0;
  double head_forward = 0, head_backward = 0;  // final norm, logits, cross-entropy
  double attention_core_forward = 0;           // what selective recompute re-runs
  // The memory-bound kernels of an attention and an MLP block's forward: what the op-level
  // policy (selective_op) re-runs.
  double elementwise_forward = 0;
};

class PlanKernelTimes {
 public:
  // The scenario's layer times, or nothing when its model is not a transformer or its GPU has
  // no kernel figures (the estimate then keeps its closed form). Thread-safe.
  std::optional<LayerKernelSeconds> get(const Scenario& scenario);
  // Distinct layer shapes costed so far.
  std::size_t shapes() const;

 private:
  // What the kernel configuration depends on beyond the model (fixed per search).
  using Key = std::tuple<int, int, bool, long, int, int, Precision, Attention, bool, int, bool,
                         bool, int, int, PipelineEngine>;
  mutable std::mutex mutex_;
  std::map<Key, LayerKernelSeconds> cache_;
};

}  // namespace clustersim::models
