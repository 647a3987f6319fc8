// Sharded data parallelism (DESIGN.md "FSDP / ZeRO"; docs/parallelism.md has the conventions):
// - zero1, zero2 (DeepSpeed): gradients reduce-scattered in DDP-like buckets over the dp group,
//   each rank steps its 1/N of the optimizer, then the updated parameters are all-gathered.
//   ZeRO-1 reduces at the last micro-batch only; ZeRO-2, which keeps no full gradient to
//   accumulate into, reduce-scatters every micro-batch (DeepSpeed's engine: "ZeRO stage >= 2
//   communicates during non gradient accumulation boundaries as well").
// - zero3 = fsdp (full shard, PyTorch FSDP): per unit an all-gather of its parameters before its
//   forward and before its backward (unless still gathered), a reduce-scatter of its gradients
//   after its backward of the last micro-batch, with prefetch and reshard-after-forward;
//   all-gathers and reduce-scatters on their own streams.
// - hsdp: fsdp inside a shard group (one node's ranks by default), then an all-reduce of the
//   gradient shard across the replicas.
// Everything applies to the rank's local parameters: its TP shard of its stage's layers. Routed
// experts are sharded over the expert-data-parallel group, dense tensors over the dp group.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "engine/schedule.hpp"
#include "models/model_costs.hpp"
#include "models/plans/layer_parallelism.hpp"
#include "models/rank_layout.hpp"
#include "models/scenario.hpp"

namespace clustersim::models {

// A rank's local parameters of one layer: its TP shard and its own experts.
LayerCost local_shard(const LayerCost& layer, const LayerParallelism& tp, int num_experts, int ep,
                      int ep_index);

class ShardedDataParallel {
 public:
  using GroupFn = std::function<engine::GroupId(const std::vector<engine::Rank>&, const char*)>;

  // `chunks`: the layer indices of each global pipeline chunk (stage_partition.hpp).
  ShardedDataParallel(const Scenario& scenario, const RankLayout& layout,
                      const std::vector<LayerCost>& layers,
                      const std::vector<std::vector<int>>& chunks, const LayerParallelism& tp,
                      engine::ScheduleBuilder& builder, GroupFn group);

  // zero3, fsdp and hsdp gather parameters per unit; zero1 and zero2 only shard the optimizer.
  bool gathers_parameters() const { return full_; }

  // Starts rank `rank`'s iteration; `previous` is its last op of the iteration before (or kNone).
  void begin_rank(engine::Rank rank, engine::OpId previous);
  // Around layer `layer` of chunk `chunk` in a forward or backward step. Before a unit's first
  // layer (in that direction) this issues the unit's all-gather and the prefetches, and adds the
  // unit's all-gather to `deps`.
  void before_layer(int chunk, int layer, bool forward, std::uint32_t mb,
                    std::vector<engine::OpId>& deps);
  void after_layer(int chunk, int layer, bool forward, std::uint32_t mb, engine::OpId last,
                   engine::OpId weight_grads);
  // After the last pipeline step: the gradient reductions the optimizer waits for (ZeRO-1/2's
  // bucket reduce-scatters are emitted here).
  std::vector<engine::OpId> gradient_ops();
  // Parameters this rank's optimizer steps: its shards.
  double optimizer_params() const;
  // ZeRO-1/2: all-gather the updated parameters after the optimizer step.
  void after_optimizer(engine::OpId step);

  // One FSDP unit of a chunk: its layers in forward order and its local parameter count.
  struct Unit {
    int id = 0;  // global, in forward order over the whole model
    std::vector<int> layers;
    double dense_params = 0;
    double expert_params = 0;
  };
  const std::vector<Unit>& units(int chunk) const {
    return units_[static_cast<std::size_t>(chunk)];
  }

 private:
  struct UnitState {
    bool gathered = false;
    std::vector<engine::OpId> gather;  // the all-gather(s) the unit's compute waits for
  };
  struct Groups {
    engine::GroupId dense = engine::kNone, expert = engine::kNone, replica = engine::kNone;
    int dense_size = 1, expert_size = 1, replica_size = 1;
  };
  void build_units();
  void gather(int chunk, int unit, bool forward, std::uint32_t mb,
              const std::vector<engine::OpId>& extra_deps);
  void reduce_unit(int chunk, int unit, std::uint32_t mb, engine::OpId ready);
  std::vector<LayerCost> local_layers(bool experts) const;  // the rank's stage, forward order
  engine::OpId collective(engine::StreamId stream, engine::CollectiveType type,
                          engine::GroupId group, double params, const std::string& name,
                          std::uint32_t mb, std::uint32_t chunk,
                          std::span<const engine::OpId> deps);

  const Scenario& sc_;
  const RankLayout& layout_;
  const std::vector<LayerCost>& layers_;
  const std::vector<std::vector<int>>& chunks_;
  const LayerParallelism& tp_;
  engine::ScheduleBuilder& b_;
  GroupFn group_;
  bool full_ = false;
  int elem_ = 2;
  int num_experts_ = 0;
  int microbatches_ = 1;
  engine::StreamId compute_ = 0, gather_stream_ = 0, reduce_stream_ = 0;
  std::vector<std::vector<Unit>> units_;         // by global chunk
  std::vector<std::vector<int>> unit_of_layer_;  // by global chunk: layer -> unit, via position
  // Per rank, reset by begin_rank.
  engine::Rank rank_ = 0;
  int stage_ = 0;
  Groups groups_;
  engine::OpId previous_ = engine::kNone;
  std::vector<std::vector<UnitState>> state_;              // by global chunk, unit
  std::map<int, std::vector<engine::OpId>> backward_ops_;  // layer -> per micro-batch
  std::vector<engine::OpId> gradient_ops_;
};

}  // namespace clustersim::models
