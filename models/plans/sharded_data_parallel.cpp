#include "models/plans/sharded_data_parallel.hpp"

#include <algorithm>
#include <string>
#include <tuple>
#include <variant>

#include "models/gradient_buckets.hpp"
#include "models/plans/expert_parallelism.hpp"

namespace clustersim::models {

using engine::Category;
using engine::CollectiveType;
using engine::OpId;
using engine::Rank;

LayerCost local_shard(const LayerCost& layer, const LayerParallelism& tp, int num_experts, int ep,
                      int ep_index) {
  LayerCost shard = layer;
  if (num_experts > 0) {
    shard = select_tensors(layer, false, num_experts, ep, ep_index);
    const LayerCost own = select_tensors(layer, true, num_experts, ep, ep_index);
    shard.tensors.insert(shard.tensors.end(), own.tensors.begin(), own.tensors.end());
    shard.params += own.params;
  }
  for (auto& t : shard.tensors)
    t.count = tp.local_params(shard, t.count);
  shard.params = tp.local_params(shard, shard.params);
  return shard;
}

namespace {

int moe_experts(const Scenario& sc) {
  const auto* t = std::get_if<TransformerSpec>(&sc.model.body);
  return t != nullptr && t->moe ? t->moe->num_experts : 0;
}

}  // namespace

ShardedDataParallel::ShardedDataParallel(const Scenario& sc, const RankLayout& layout,
                                         const std::vector<LayerCost>& layers,
                                         const std::vector<std::vector<int>>& chunks,
                                         const LayerParallelism& tp, engine::ScheduleBuilder& b,
                                         GroupFn group)
    : sc_(sc),
      layout_(layout),
      layers_(layers),
      chunks_(chunks),
      tp_(tp),
      b_(b),
      group_(std::move(group)),
      elem_(bytes_per_element(sc.training.precision)),
      num_experts_(moe_experts(sc)),
      microbatches_(static_cast<int>(sc.num_microbatches())) {
  const auto mode = sc.parallel.data_parallel;
  full_ = mode == DataParallel::zero3 || mode == DataParallel::fsdp || mode == DataParallel::hsdp;
  compute_ = b_.stream("compute");
  if (full_) {
    // PyTorch FSDP issues all-gathers and reduce-scatters on streams of their own.
    gather_stream_ = b_.stream("fsdp all_gather");
    reduce_stream_ = b_.stream("fsdp reduce_scatter");
  } else {
    reduce_stream_ = b_.stream("comm");
  }
  build_units();
}

// Units: `unit_blocks` consecutive transformer blocks; the embedding and the LM head are units of
// their own (PyTorch wraps each block; torchtitan shards the embedding and the output separately);
// a layer list groups `unit_blocks` consecutive layers. Units never cross a pipeline chunk.
void ShardedDataParallel::build_units() {
  const bool transformer = std::holds_alternative<TransformerSpec>(sc_.model.body);
  const int per_unit = std::max(1, sc_.parallel.fsdp.unit_blocks);
  int next_id = 0;
  units_.assign(chunks_.size(), {});
  unit_of_layer_.assign(chunks_.size(), {});
  for (std::size_t g = 0; g < chunks_.size(); ++g) {
    long previous_key = -2;
    for (int l : chunks_[g]) {
      const LayerCost& layer = layers_[static_cast<std::size_t>(l)];
      const long key = !transformer       ? l / per_unit
                       : layer.block >= 0 ? layer.block / per_unit
                                          : -1000 - l;  // a unit of its own
      if (units_[g].empty() || key != previous_key) units_[g].push_back(Unit{next_id++, {}, 0, 0});
      previous_key = key;
      Unit& u = units_[g].back();
      u.layers.push_back(l);
      const LayerCost local = local_shard(layer, tp_, num_experts_, sc_.parallel.ep, 0);
      for (const auto& t : local.tensors)
        (expert_of(t) >= 0 ? u.expert_params : u.dense_params) += t.count;
      unit_of_layer_[g].push_back(static_cast<int>(units_[g].size()) - 1);
    }
  }
}

void ShardedDataParallel::begin_rank(Rank r, OpId previous) {
  rank_ = r;
  stage_ = layout_.coords(r).pp;
  previous_ = previous;
  backward_ops_.clear();
  gradient_ops_.clear();
  state_.assign(units_.size(), {});
  for (std::size_t g = 0; g < units_.size(); ++g)
    state_[g].assign(units_[g].size(), UnitState{});

  groups_ = Groups{};
  const auto dp = layout_.dp_group(r);
  std::vector<Rank> dense = dp;
  if (sc_.parallel.data_parallel == DataParallel::hsdp) {
    // Shard inside `shard_group` consecutive members of the dp group (default: those on this
    // rank's node), replicate across the groups: the replica group holds the same position.
    const int gpus = sc_.cluster.topology.node.gpus;
    int size = sc_.parallel.fsdp.shard_group;
    if (size == 0)
      size = static_cast<int>(std::count_if(dp.begin(), dp.end(), [&](Rank x) {
        return static_cast<int>(x) / gpus == static_cast<int>(r) / gpus;
      }));
    if (size < 1 || static_cast<int>(dp.size()) % size != 0)
      sc_.fail("parallel.fsdp.shard_group",
               "shard_group = " + std::to_string(size) + " does not divide dp = " +
                   std::to_string(dp.size()) + "; allowed: a divisor of dp");
    const auto pos = static_cast<int>(std::find(dp.begin(), dp.end(), r) - dp.begin());
    const int first = pos / size * size;
    dense.assign(dp.begin() + first, dp.begin() + first + size);
    std::vector<Rank> replica;
    for (int i = pos % size; i < static_cast<int>(dp.size()); i += size)
      replica.push_back(dp[static_cast<std::size_t>(i)]);
    groups_.replica_size = static_cast<int>(replica.size());
    if (replica.size() > 1) groups_.replica = group_(replica, "hsdp replica");
  }
  groups_.dense_size = static_cast<int>(dense.size());
  if (dense.size() > 1)
    groups_.dense =
        group_(dense, sc_.parallel.data_parallel == DataParallel::hsdp ? "hsdp shard" : "dp");
  if (num_experts_ > 0) {
    const auto expert = layout_.expert_dp_group(r);
    groups_.expert_size = static_cast<int>(expert.size());
    if (expert.size() > 1) groups_.expert = group_(expert, "expert_dp");
  }
}

OpId ShardedDataParallel::collective(engine::StreamId stream, CollectiveType type,
                                     engine::GroupId group, double params, const std::string& name,
                                     std::uint32_t mb, std::uint32_t chunk,
                                     std::span<const OpId> deps) {
  if (group == engine::kNone || params <= 0) return engine::kNone;
  engine::ScheduleBuilder::Common c{rank_, stream, Category::dp_comm, name, mb, deps};
  c.chunk = chunk;
  // Sizes follow collectives.hpp: the total buffer of an all-gather or reduce-scatter, the
  // buffer on each rank of an all-reduce.
  return b_.collective(c, type, group, static_cast<std::uint64_t>(params * elem_));
}

void ShardedDataParallel::gather(int g, int u, bool forward, std::uint32_t mb,
                                 const std::vector<OpId>& extra_deps) {
  UnitState& st = state_[static_cast<std::size_t>(g)][static_cast<std::size_t>(u)];
  if (st.gathered) return;
  const Unit& unit = units_[static_cast<std::size_t>(g)][static_cast<std::size_t>(u)];
  std::vector<OpId> deps = extra_deps;
  if (previous_ != engine::kNone) deps.push_back(previous_);
  const std::string name = "fsdp U" + std::to_string(unit.id) + " all_gather";
  const char* dir = forward ? " fwd" : " bwd";
  st.gather.clear();
  const auto id = static_cast<std::uint32_t>(unit.id);
  for (OpId op : {collective(gather_stream_, CollectiveType::all_gather, groups_.dense,
                             unit.dense_params, name + dir, mb, id, deps),
                  collective(gather_stream_, CollectiveType::all_gather, groups_.expert,
                             unit.expert_params, name + " experts" + dir, mb, id, deps)})
    if (op != engine::kNone) st.gather.push_back(op);
  st.gathered = true;
}

void ShardedDataParallel::before_layer(int g, int layer, bool forward, std::uint32_t mb,
                                       std::vector<OpId>& deps) {
  if (!full_) return;
  const auto& units = units_[static_cast<std::size_t>(g)];
  const int u = unit_of_layer_[static_cast<std::size_t>(g)][static_cast<std::size_t>(
      layer - chunks_[static_cast<std::size_t>(g)].front())];
  const Unit& unit = units[static_cast<std::size_t>(u)];
  if (layer != (forward ? unit.layers.front() : unit.layers.back())) return;
  gather(g, u, forward, mb, deps);  // gated by what gates the unit's compute (a pipeline recv)
  // Prefetch: the next units in this direction's order, issued before this unit's compute starts.
  const int depth = forward ? (sc_.parallel.fsdp.forward_prefetch ? sc_.parallel.fsdp.prefetch : 0)
                            : sc_.parallel.fsdp.prefetch;
  for (int i = 1; i <= depth; ++i) {
    const int v = forward ? u + i : u - i;
    if (v < 0 || v >= static_cast<int>(units.size())) break;
    gather(g, v, forward, mb, {});
  }
  const auto& st = state_[static_cast<std::size_t>(g)][static_cast<std::size_t>(u)];
  deps.insert(deps.end(), st.gather.begin(), st.gather.end());
}

void ShardedDataParallel::after_layer(int g, int layer, bool forward, std::uint32_t mb, OpId last,
                                      OpId weight_grads) {
  previous_ = last;
  if (!full_) {
    if (!forward) {
      auto& ops = backward_ops_[layer];
      ops.resize(static_cast<std::size_t>(microbatches_), engine::kNone);
      ops[mb] = weight_grads;
    }
    return;
  }
  const int u = unit_of_layer_[static_cast<std::size_t>(g)][static_cast<std::size_t>(
      layer - chunks_[static_cast<std::size_t>(g)].front())];
  const Unit& unit = units_[static_cast<std::size_t>(g)][static_cast<std::size_t>(u)];
  if (layer != (forward ? unit.layers.back() : unit.layers.front())) return;
  UnitState& st = state_[static_cast<std::size_t>(g)][static_cast<std::size_t>(u)];
  // Free after use: after backward always, after forward unless SHARD_GRAD_OP keeps them.
  if (!forward || sc_.parallel.fsdp.reshard_after_forward) st.gathered = false;
  // With gradient accumulation FSDP keeps unsharded gradients (no_sync): reduce once, at the last
  // micro-batch.
  if (!forward && static_cast<int>(mb) == microbatches_ - 1) reduce_unit(g, u, mb, weight_grads);
}

void ShardedDataParallel::reduce_unit(int g, int u, std::uint32_t mb, OpId ready) {
  const Unit& unit = units_[static_cast<std::size_t>(g)][static_cast<std::size_t>(u)];
  const std::string name = "fsdp U" + std::to_string(unit.id);
  const auto id = static_cast<std::uint32_t>(unit.id);
  const OpId after[] = {ready};
  const OpId rs = collective(reduce_stream_, CollectiveType::reduce_scatter, groups_.dense,
                             unit.dense_params, name + " reduce_scatter", mb, id, after);
  if (rs != engine::kNone) gradient_ops_.push_back(rs);
  if (groups_.replica != engine::kNone) {
    // HSDP: the shard's gradient is all-reduced across the replicas.
    const OpId shard[] = {rs == engine::kNone ? ready : rs};
    gradient_ops_.push_back(collective(reduce_stream_, CollectiveType::all_reduce, groups_.replica,
                                       unit.dense_params / groups_.dense_size,
                                       name + " replica all_reduce", mb, id, shard));
  }
  const OpId ers = collective(reduce_stream_, CollectiveType::reduce_scatter, groups_.expert,
                              unit.expert_params, name + " experts reduce_scatter", mb, id, after);
  if (ers != engine::kNone) gradient_ops_.push_back(ers);
}

std::vector<LayerCost> ShardedDataParallel::local_layers(bool experts) const {
  std::vector<LayerCost> out;
  for (int c = 0; c < sc_.parallel.virtual_stages; ++c)
    for (int l : chunks_[static_cast<std::size_t>(c * sc_.parallel.pp + stage_)]) {
      const int ep_index = layout_.coords(rank_).ep;
      LayerCost shard = local_shard(layers_[static_cast<std::size_t>(l)], tp_, num_experts_,
                                    sc_.parallel.ep, ep_index);
      if (num_experts_ > 0)
        shard = select_tensors(shard, experts, num_experts_, sc_.parallel.ep, ep_index);
      else if (experts)
        shard.tensors.clear(), shard.params = 0;
      out.push_back(std::move(shard));
    }
  return out;
}

std::vector<OpId> ShardedDataParallel::gradient_ops() {
  if (full_) return gradient_ops_;
  // ZeRO-1/2: DDP's buckets (dense and expert tensors apart), reduce-scattered as they fill.
  std::vector<int> index;
  for (int c = 0; c < sc_.parallel.virtual_stages; ++c)
    for (int l : chunks_[static_cast<std::size_t>(c * sc_.parallel.pp + stage_)])
      index.push_back(l);
  const double bucket = sc_.parallel.bucket_bytes;
  const auto dense = assign_buckets(local_layers(false), elem_, bucket);
  const auto expert = assign_buckets(local_layers(true), elem_, bucket);
  // Readiness order: the bucket whose earliest layer comes last in forward order is ready first.
  std::vector<std::tuple<int, int, std::size_t>> order;  // (-first layer, set, bucket)
  for (std::size_t k = 0; k < dense.size(); ++k)
    order.emplace_back(-dense[k].first_layer, 0, k);
  for (std::size_t k = 0; k < expert.size(); ++k)
    order.emplace_back(-expert[k].first_layer, 1, k);
  std::stable_sort(order.begin(), order.end());
  const bool every_microbatch = sc_.parallel.data_parallel == DataParallel::zero2;
  for (int mb = every_microbatch ? 0 : microbatches_ - 1; mb < microbatches_; ++mb) {
    const auto m = static_cast<std::size_t>(mb);
    const OpId end_of_backward = backward_ops_.at(index.front())[m];
    for (const auto& [neg_first, set, k] : order) {
      const auto& bk = set == 0 ? dense[k] : expert[k];
      const OpId ready[] = {sc_.parallel.overlap
                                ? backward_ops_.at(index[static_cast<std::size_t>(-neg_first)])[m]
                                : end_of_backward};
      const std::string name = std::string(set == 0 ? "zero bucket " : "zero expert bucket ") +
                               std::to_string(k) + " reduce_scatter";
      const OpId op = collective(
          reduce_stream_, CollectiveType::reduce_scatter, set == 0 ? groups_.dense : groups_.expert,
          bk.params, name, static_cast<std::uint32_t>(mb), static_cast<std::uint32_t>(k), ready);
      if (op != engine::kNone) gradient_ops_.push_back(op);
    }
  }
  return gradient_ops_;
}

double ShardedDataParallel::optimizer_params() const {
  double dense = 0, expert = 0;
  for (int c = 0; c < sc_.parallel.virtual_stages; ++c)
    for (const auto& u : units_[static_cast<std::size_t>(c * sc_.parallel.pp + stage_)]) {
      dense += u.dense_params;
      expert += u.expert_params;
    }
  return dense / groups_.dense_size + expert / groups_.expert_size;
}

void ShardedDataParallel::after_optimizer(OpId step) {
  if (full_) return;  // FSDP's parameters stay sharded until the next forward gathers them
  double dense = 0, expert = 0;
  for (int c = 0; c < sc_.parallel.virtual_stages; ++c)
    for (const auto& u : units_[static_cast<std::size_t>(c * sc_.parallel.pp + stage_)]) {
      dense += u.dense_params;
      expert += u.expert_params;
    }
  // DeepSpeed all-gathers the updated parameters inside optimizer.step(): on the critical path.
  const OpId after[] = {step};
  collective(compute_, CollectiveType::all_gather, groups_.dense, dense, "zero params all_gather",
             engine::kNone, engine::kNone, after);
  collective(compute_, CollectiveType::all_gather, groups_.expert, expert,
             "zero expert params all_gather", engine::kNone, engine::kNone, after);
}

}  // namespace clustersim::models
