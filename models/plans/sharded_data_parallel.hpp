// Sharded data parallelism (DESIGN.md "FSDP / ZeRO"; docs/parallelism.md has the conventions):
// - zero1, zero2 (DeepSpeed): gradients reduce-scattered in DDP-like buckets over the dp group,
//   each rank steps its 1/N of the optimizer, then the updated parameters are all-gathered.
//   ZeRO-1 reduces at the last micro-batch only; ZeRO-2, which keeps no full gradient to
//   accumulate into, reduce-scatters every micro-batch (DeepSpeed's engine: "ZeRO stage >= 2
//   communicates during non gradient accumulation boundaries as well").
// - zero3 = fsdp (full shard, PyTorch FSDP): per unit an all-gather of its parameters before its
//   forward and before its backward (unless still gathered), a reduce-scatter of its gradients
//   after its backward in every micro-batch (or the last only, under no_sync), with prefetch and
//   reshard-after-forward;
//   all-gathers and reduce-scatters on their own streams.
// - hsdp: fsdp inside a shard group (one node's ranks by default), then an all-reduce of the
//   gradient shard across the replicas.
// Everything applies to the rank's local parameters: its TP shard of its stage's layers. Routed
// experts are sharded over the expert-data-parallel group, dense tensors over the dp group.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "engine/schedule.hpp"
#include "models/plans/data_parallel.hpp"

namespace clustersim::models {

// HSDP: the members of `rank`'s dp group it shards with: `parallel.fsdp.shard_group` consecutive
// members, by default those on the rank's node; it replicates across such groups.
std::vector<engine::Rank> hsdp_shard_group(const PlanContext& ctx, engine::Rank rank);

class ShardedDataParallel final : public DataParallelStrategy {
 public:
  // `kind`: zero1, zero2, zero3, fsdp or hsdp.
  ShardedDataParallel(DataParallel kind, const PlanContext& ctx, const TensorParallelism& tp,
                      ScheduleSink* sink);

  void begin_rank(engine::Rank rank, engine::OpId previous) override;
  // Before a unit's first layer (in that direction) this issues the unit's all-gather and the
  // prefetches, and adds the unit's all-gather to `deps`.
  void before_layer(int chunk, int layer, bool forward, std::uint32_t mb,
                    std::vector<engine::OpId>& deps) override;
  void after_layer(int chunk, int layer, bool forward, std::uint32_t mb, engine::OpId last,
                   engine::OpId weight_grads) override;
  // ZeRO-1/2's bucket reduce-scatters are emitted here; FSDP's were emitted per unit.
  std::vector<engine::OpId> gradient_ops() override;
  double optimizer_params() const override;  // this rank's shards
  void after_optimizer(engine::OpId step) override;
  MemoryBreakdown memory(int stage) const override;
  double accumulated_gradients(int stage) const override;
  double backward_gradient_buffers(int stage, int layer) const override;
  StartupMemory startup_memory(int stage) const override;  // fsdp_startup.cpp

 private:
  // One FSDP unit of a chunk: its layers in forward order and its local parameter count.
  struct Unit {
    int id = 0;  // global, in forward order over the whole model
    std::vector<int> layers;
    double dense_params = 0;
    double expert_params = 0;
  };
  struct UnitState {
    bool gathered = false;
    std::vector<engine::OpId> gather;  // the all-gather(s) the unit's compute waits for
  };
  struct Groups {
    engine::GroupId dense = engine::kNone, expert = engine::kNone, replica = engine::kNone;
    // HSDP: the ranks holding the same expert shard in the other shard groups.
    engine::GroupId expert_replica = engine::kNone;
    int dense_size = 1, expert_size = 1, replica_size = 1;
  };
  // HSDP's expert groups for `rank`: the members of its expert-dp group inside its shard group
  // (the experts' shard group) and those at the same position in every other shard group (their
  // replica group). FSDP2's hybrid mesh treats routed experts as any parameter: sharded inside,
  // replicated across.
  std::pair<std::vector<engine::Rank>, std::vector<engine::Rank>> hsdp_expert_groups(
      engine::Rank rank, const std::vector<engine::Rank>& shard) const;
  void build_units();
  // HSDP: the members of `rank`'s dp group it shards with (shard_group consecutive members; by
  // default those on its node); the whole dp group otherwise.
  std::vector<engine::Rank> shard_group(engine::Rank rank) const;
  // Issues the unit's all-gather(s) unless it is gathered, after the rank's previous op.
  void gather(int chunk, int unit, bool forward, std::uint32_t mb);
  void reduce_unit(int chunk, int unit, std::uint32_t mb, engine::OpId ready);
  engine::OpId collective(engine::StreamId stream, engine::CollectiveType type,
                          engine::GroupId group, double params, const std::string& name,
                          std::uint32_t mb, std::uint32_t chunk,
                          std::span<const engine::OpId> deps);
  int unit_of(int chunk, int layer) const;
  int next_unit(int chunk, int unit, bool forward, int steps) const;
  // Local parameters of stage `stage`'s root unit, of the root's first layer (`root_first`, the
  // embedding) and of its largest other unit.
  struct UnitSizes {
    double root = 0, root_first_layer = 0, largest = 0;
    int root_first = -1;
  };
  UnitSizes measure_units(int stage) const;
  // Ranks a stage's dense parameters and its routed experts' are each sharded over.
  struct ShardSizes {
    double dense = 1, expert = 1;
  };
  ShardSizes shard_sizes(int stage) const;

  DataParallel kind_;
  const PlanContext& ctx_;
  const TensorParallelism& tp_;
  ScheduleSink* sink_;
  bool full_ = false;  // zero3, fsdp, hsdp gather parameters per unit
  int elem_ = 2;
  engine::StreamId compute_ = 0, gather_stream_ = 0, reduce_stream_ = 0;
  std::vector<std::vector<Unit>> units_;         // by global chunk
  std::vector<std::vector<int>> unit_of_layer_;  // by global chunk: layer -> unit, via position
  std::vector<int> root_;                        // by global chunk: the root unit, or -1
  std::vector<std::vector<int>> order_;          // by global chunk: units in forward order of use
  std::vector<UnitSizes> sizes_;                 // by pipeline stage
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
