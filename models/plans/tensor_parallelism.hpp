// One layer's forward and backward ops on one rank under Megatron tensor parallelism
// (DESIGN.md "TP"): attention (QKV column-parallel, output row-parallel) and MLP (fc1 column,
// fc2 row) each end with an all-reduce of the b·s·h activation over the TP group in forward, and
// their input gradients are all-reduced in backward; with sequence parallelism each all-reduce
// becomes an all-gather before the layer and a reduce-scatter after it. The embedding is
// vocabulary-parallel (an all-reduce after its lookup) and so is the LM head (the cross-entropy's
// max and sum are all-reduced in forward, the input gradient in backward). These collectives run
// on the compute stream: they are on the critical path. The MLP of an MoE block runs its router,
// token all-to-alls and experts in between (expert_parallelism.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/schedule.hpp"
#include "models/model_costs.hpp"
#include "models/plans/expert_parallelism.hpp"
#include "models/scenario.hpp"

namespace clustersim::models {

// The process groups one rank's layers communicate over (kNone where the axis has one rank).
struct LayerGroups {
  engine::GroupId tp = engine::kNone;
  engine::GroupId ep = engine::kNone;
};

class LayerParallelism {
 public:
  LayerParallelism(const Scenario& scenario, const std::vector<LayerCost>& layers);

  // Emits layer `layer`'s forward for micro-batch `mb`; `deps` gate its first op and are then
  // cleared. Returns the last op.
  engine::OpId forward(engine::ScheduleBuilder& b, engine::Rank rank, engine::StreamId stream,
                       const LayerGroups& groups, int layer, std::uint32_t mb,
                       std::vector<engine::OpId>& deps);
  // Emits recompute (if any) and backward; `*weight_grads` receives the op that produces the
  // layer's weight gradients.
  engine::OpId backward(engine::ScheduleBuilder& b, engine::Rank rank, engine::StreamId stream,
                        const LayerGroups& groups, int layer, std::uint32_t mb,
                        std::vector<engine::OpId>& deps, engine::OpId* weight_grads);

  // Bytes of a b·s·h activation at the training precision: what TP collectives and pipeline
  // sends move (a 1/t shard crosses stage boundaries with sequence parallelism).
  std::uint64_t activation_bytes() const { return activation_bytes_; }
  std::uint64_t boundary_bytes() const;
  // This rank's share of `count` parameters of `layer`.
  double local_params(const LayerCost& layer, double count) const;
  // Whether the layer is split over the TP group.
  bool sharded(const LayerCost& layer) const;
  const ExpertParallelism& experts() const { return moe_; }

 private:
  enum class Kind { embedding, attention, mlp, head, other };
  Kind kind(const LayerCost& layer) const;
  // The collectives around a layer's compute, shared by forward and recompute.
  engine::OpId forward_pass(engine::ScheduleBuilder& b, engine::Rank rank, engine::StreamId stream,
                            const LayerGroups& groups, int layer, std::uint32_t mb,
                            std::vector<engine::OpId>& deps, engine::Category category,
                            double flops, const char* suffix);

  const Scenario& sc_;
  const std::vector<LayerCost>& layers_;
  ExpertParallelism moe_;
  int tp_ = 1;
  bool sequence_parallel_ = false;
  bool transformer_ = false;
  int elem_ = 2;
  std::uint64_t activation_bytes_ = 0;
  std::uint8_t precision_ = 0;
};

}  // namespace clustersim::models
