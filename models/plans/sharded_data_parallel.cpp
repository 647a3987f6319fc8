#include "models/plans/sharded_data_parallel.hpp"

#include <algorithm>
#include <string>
#include <tuple>

#include "models/gradient_buckets.hpp"
#include "models/plans/expert_parallelism.hpp"
#include "models/plans/pipeline_order.hpp"
#include "models/plans/tensor_parallelism.hpp"

namespace clustersim::models {

using engine::Category;
using engine::CollectiveType;
using engine::OpId;
using engine::Rank;

ShardedDataParallel::ShardedDataParallel(DataParallel kind, const PlanContext& ctx,
                                         const TensorParallelism& tp, ScheduleSink* sink)
    : kind_(kind), ctx_(ctx), tp_(tp), sink_(sink), elem_(ctx.element_bytes()) {
  full_ = kind == DataParallel::zero3 || kind == DataParallel::fsdp || kind == DataParallel::hsdp;
  if (sink_ != nullptr) {
    compute_ = sink_->ops.stream("compute");
    if (full_) {
      // PyTorch FSDP issues all-gathers and reduce-scatters on streams of their own.
      gather_stream_ = sink_->ops.stream("fsdp all_gather");
      reduce_stream_ = sink_->ops.stream("fsdp reduce_scatter");
    } else {
      // DeepSpeed's PipelineEngine reduces from its ReduceGrads step, on the compute stream.
      reduce_stream_ = sink_->ops.stream(
          ctx.parallel.pipeline_engine == PipelineEngine::deepspeed ? "compute" : "comm");
    }
  }
  build_units();
}

// Units: `unit_blocks` consecutive transformer blocks; the embedding and the LM head are units of
// their own (PyTorch wraps each block; torchtitan shards the embedding and the output separately),
// or with `root_unit` one unit with the final norm (the root, which wraps what no block holds); a
// layer list groups `unit_blocks` consecutive layers. Units never cross a pipeline chunk.
void ShardedDataParallel::build_units() {
  const bool transformer = ctx_.transformer != nullptr;
  const bool root = transformer && ctx_.parallel.fsdp.root_unit;
  const int per_unit = std::max(1, ctx_.parallel.fsdp.unit_blocks);
  int next_id = 0;
  units_.assign(ctx_.chunks.size(), {});
  unit_of_layer_.assign(ctx_.chunks.size(), {});
  root_.assign(ctx_.chunks.size(), -1);
  order_.assign(ctx_.chunks.size(), {});
  // Any rank's shard has the same sizes: take the first rank of each layer's stage.
  for (std::size_t g = 0; g < ctx_.chunks.size(); ++g) {
    long previous_key = -2;
    for (int l : ctx_.chunks[g]) {
      const LayerCost& layer = ctx_.layers[static_cast<std::size_t>(l)];
      const bool in_root = root && layer.block < 0;
      if (in_root && root_[g] < 0) {
        root_[g] = static_cast<int>(units_[g].size());
        units_[g].push_back(Unit{next_id++, {}, 0, 0});
      }
      const long key = !transformer       ? l / per_unit
                       : layer.block >= 0 ? layer.block / per_unit
                                          : -1000 - l;  // a unit of its own
      if (!in_root && (units_[g].empty() || key != previous_key))
        units_[g].push_back(Unit{next_id++, {}, 0, 0});
      previous_key = in_root ? -2 : key;
      const int index = in_root ? root_[g] : static_cast<int>(units_[g].size()) - 1;
      Unit& u = units_[g][static_cast<std::size_t>(index)];
      u.layers.push_back(l);
      for (const auto& t : local_shard(layer, tp_, ctx_.num_experts(), ctx_.parallel.ep, 0).tensors)
        (t.expert >= 0 ? u.expert_params : u.dense_params) += t.count;
      unit_of_layer_[g].push_back(index);
      // Forward order of first use; the backward walks it in reverse, except that the root
      // (first in both) is needed first there too, from the head.
      if (order_[g].empty() || order_[g].back() != index) order_[g].push_back(index);
    }
    auto& order = order_[g];
    if (root_[g] >= 0)  // the root reappears at the head: keep its first place only
      order.erase(std::remove(order.begin() + 1, order.end(), root_[g]), order.end());
  }
  // The memory model asks for these per layer of every walk: sized once, per pipeline stage.
  sizes_.clear();
  for (int stage = 0; stage < ctx_.parallel.pp; ++stage)
    sizes_.push_back(measure_units(stage));
}

// The unit `steps` places after unit `u` in this direction's order of first use (-1 if none).
int ShardedDataParallel::next_unit(int g, int u, bool forward, int steps) const {
  const auto& order = order_[static_cast<std::size_t>(g)];
  const int n = static_cast<int>(order.size());
  // Backward order: the root first (its head), then the other units in reverse.
  auto backward_at = [&](int i) {
    if (root_[static_cast<std::size_t>(g)] < 0) return order[static_cast<std::size_t>(n - 1 - i)];
    return i == 0 ? order[0] : order[static_cast<std::size_t>(n - i)];
  };
  for (int i = 0; i < n; ++i) {
    const int at = forward ? order[static_cast<std::size_t>(i)] : backward_at(i);
    if (at != u) continue;
    const int j = i + steps;
    if (j >= n) return -1;
    return forward ? order[static_cast<std::size_t>(j)] : backward_at(j);
  }
  return -1;
}

std::vector<Rank> hsdp_shard_group(const PlanContext& ctx, Rank r) {
  const auto dp = ctx.layout.dp_group(r);
  // Shard inside `shard_group` consecutive members of the dp group (default: those on this
  // rank's node), replicate across the groups. Validation checked that the size divides dp.
  int size = ctx.parallel.fsdp.shard_group;
  if (size == 0)
    size = static_cast<int>(std::count_if(dp.begin(), dp.end(), [&](Rank x) {
      return static_cast<int>(x) / ctx.gpus_per_node == static_cast<int>(r) / ctx.gpus_per_node;
    }));
  const auto pos = static_cast<int>(std::find(dp.begin(), dp.end(), r) - dp.begin());
  const int first = pos / size * size;
  return {dp.begin() + first, dp.begin() + first + size};
}

std::vector<Rank> ShardedDataParallel::shard_group(Rank r) const {
  if (kind_ != DataParallel::hsdp) return ctx_.layout.dp_group(r);
  return hsdp_shard_group(ctx_, r);
}

void ShardedDataParallel::begin_rank(Rank r, OpId previous) {
  rank_ = r;
  stage_ = ctx_.layout.coords(r).pp;
  previous_ = previous;
  backward_ops_.clear();
  gradient_ops_.clear();
  state_.assign(units_.size(), {});
  for (std::size_t g = 0; g < units_.size(); ++g)
    state_[g].assign(units_[g].size(), UnitState{});

  groups_ = Groups{};
  const std::vector<Rank> dense = shard_group(r);
  if (kind_ == DataParallel::hsdp) {
    // The replica group holds the same position in every shard group.
    const auto dp = ctx_.layout.dp_group(r);
    const int size = static_cast<int>(dense.size());
    const auto pos = static_cast<int>(std::find(dp.begin(), dp.end(), r) - dp.begin());
    std::vector<Rank> replica;
    for (int i = pos % size; i < static_cast<int>(dp.size()); i += size)
      replica.push_back(dp[static_cast<std::size_t>(i)]);
    groups_.replica_size = static_cast<int>(replica.size());
    if (replica.size() > 1) groups_.replica = sink_->groups.get(replica, "hsdp replica");
  }
  groups_.dense_size = static_cast<int>(dense.size());
  if (dense.size() > 1)
    groups_.dense = sink_->groups.get(dense, kind_ == DataParallel::hsdp ? "hsdp shard" : "dp");
  if (ctx_.num_experts() > 0) {
    std::vector<Rank> expert = ctx_.layout.expert_dp_group(r);
    if (kind_ == DataParallel::hsdp) {
      auto [inside, across] = hsdp_expert_groups(r, dense);
      expert = std::move(inside);
      if (across.size() > 1) groups_.expert_replica = sink_->groups.get(across, "hsdp replica");
    }
    groups_.expert_size = static_cast<int>(expert.size());
    if (expert.size() > 1)
      groups_.expert =
          sink_->groups.get(expert, kind_ == DataParallel::hsdp ? "hsdp shard" : "expert_dp");
  }
}

std::pair<std::vector<Rank>, std::vector<Rank>> ShardedDataParallel::hsdp_expert_groups(
    Rank r, const std::vector<Rank>& shard) const {
  // Shard groups are `shard.size()` consecutive members of the dp group (hsdp_shard_group), and
  // the expert-dp group is a subset of the dp group: a member's block is its index there over
  // the shard size.
  const std::vector<Rank> dp = ctx_.layout.dp_group(r);
  const std::size_t size = shard.size();
  auto block_of = [&](Rank x) {
    return static_cast<std::size_t>(std::lower_bound(dp.begin(), dp.end(), x) - dp.begin()) / size;
  };
  std::vector<std::vector<Rank>> blocks;  // the expert-dp members of each shard group, in order
  std::size_t last = static_cast<std::size_t>(-1);
  for (const Rank x : ctx_.layout.expert_dp_group(r)) {
    const std::size_t b = block_of(x);
    if (blocks.empty() || b != last) blocks.emplace_back();
    blocks.back().push_back(x);
    last = b;
  }
  // r's own block (r is a member of its expert-dp group), and r's place in it.
  std::size_t pos = 0;
  const auto mine = std::find_if(blocks.begin(), blocks.end(), [&](const std::vector<Rank>& b) {
    const auto at = std::find(b.begin(), b.end(), r);
    pos = static_cast<std::size_t>(at - b.begin());
    return at != b.end();
  });
  const std::vector<Rank> inside = *mine;
  std::vector<Rank> across;
  for (const auto& b : blocks)
    if (pos < b.size()) across.push_back(b[pos]);
  return {inside, across};
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
  // Parameters are gathered in their dtype (fp8 with parallel.fp8_comm: torchao's float8
  // all-gather, Megatron's --fp8-param-gather); gradients are reduced in theirs.
  const int bytes = type == CollectiveType::all_gather ? (ctx_.parallel.fp8_comm ? 1 : elem_)
                                                       : ctx_.gradient_bytes();
  return sink_->ops.collective(c, type, group, static_cast<std::uint64_t>(params * bytes));
}

void ShardedDataParallel::gather(int g, int u, bool forward, std::uint32_t mb) {
  UnitState& st = state_[static_cast<std::size_t>(g)][static_cast<std::size_t>(u)];
  if (st.gathered) return;
  const Unit& unit = units_[static_cast<std::size_t>(g)][static_cast<std::size_t>(u)];
  std::vector<OpId> deps;
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

int ShardedDataParallel::unit_of(int g, int layer) const {
  return unit_of_layer_[static_cast<std::size_t>(g)][static_cast<std::size_t>(
      layer - ctx_.chunks[static_cast<std::size_t>(g)].front())];
}

void ShardedDataParallel::before_layer(int g, int layer, bool forward, std::uint32_t mb,
                                       std::vector<OpId>& deps) {
  if (!full_) return;
  const int u = unit_of(g, layer);
  const Unit& unit = units_[static_cast<std::size_t>(g)][static_cast<std::size_t>(u)];
  if (layer != (forward ? unit.layers.front() : unit.layers.back())) return;
  // Gated by the rank's previous op in program order, not by what gates the unit's compute (a
  // pipeline receive): the CPU issues the all-gather as it reaches the unit, and a NCCL receive
  // holds the GPU stream, not the CPU, so the gather runs while the stream waits for the peer.
  gather(g, u, forward, mb);
  // Prefetch: the next units in this direction's order, issued before this unit's compute starts.
  const FsdpConfig& fsdp = ctx_.parallel.fsdp;
  const int depth = forward ? (fsdp.forward_prefetch ? fsdp.prefetch : 0) : fsdp.prefetch;
  for (int i = 1; i <= depth; ++i) {
    const int v = next_unit(g, u, forward, i);
    if (v < 0) break;
    gather(g, v, forward, mb);
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
      ops.resize(static_cast<std::size_t>(ctx_.microbatches), engine::kNone);
      ops[mb] = weight_grads;
    }
    return;
  }
  const int u = unit_of(g, layer);
  const Unit& unit = units_[static_cast<std::size_t>(g)][static_cast<std::size_t>(u)];
  if (layer != (forward ? unit.layers.back() : unit.layers.front())) return;
  UnitState& st = state_[static_cast<std::size_t>(g)][static_cast<std::size_t>(u)];
  // Free after use: after forward unless SHARD_GRAD_OP keeps them (and never the root, whose head
  // starts the backward); after backward unless they are kept for the next micro-batch
  // (reshard_after_backward: false), and after the last one always.
  const FsdpConfig& fsdp = ctx_.parallel.fsdp;
  const bool last_microbatch = static_cast<int>(mb) == ctx_.microbatches - 1;
  const bool root = u == root_[static_cast<std::size_t>(g)];
  if (forward ? fsdp.reshard_after_forward && !root
              : (fsdp.reshard_after_backward || last_microbatch))
    st.gathered = false;
  // Each micro-batch reduce-scatters into the shard, unless no_sync keeps the unsharded
  // gradients until the last one.
  if (!forward && (last_microbatch || !fsdp.no_sync)) reduce_unit(g, u, mb, weight_grads);
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
  if (groups_.expert_replica != engine::kNone) {
    // HSDP: the experts' gradient shard too is all-reduced across the replicas.
    const OpId shard[] = {ers == engine::kNone ? ready : ers};
    const OpId ar = collective(reduce_stream_, CollectiveType::all_reduce, groups_.expert_replica,
                               unit.expert_params / groups_.expert_size,
                               name + " experts replica all_reduce", mb, id, shard);
    if (ar != engine::kNone) gradient_ops_.push_back(ar);
  }
}

std::vector<OpId> ShardedDataParallel::gradient_ops() {
  if (full_) return gradient_ops_;
  // ZeRO-1/2: DDP's buckets (dense and expert tensors apart), reduce-scattered as they fill.
  std::vector<int> index;
  const double bucket = ctx_.parallel.bucket_bytes;
  const int grad = ctx_.gradient_bytes();
  const auto dense = assign_buckets(local_layers(ctx_, tp_, rank_, false, &index), grad, bucket);
  const auto expert = assign_buckets(local_layers(ctx_, tp_, rank_, true, nullptr), grad, bucket);
  // Readiness order: the bucket whose earliest layer comes last in forward order is ready first.
  std::vector<std::tuple<int, int, std::size_t>> order;  // (-first layer, set, bucket)
  for (std::size_t k = 0; k < dense.size(); ++k)
    order.emplace_back(-dense[k].first_layer, 0, k);
  for (std::size_t k = 0; k < expert.size(); ++k)
    order.emplace_back(-expert[k].first_layer, 1, k);
  std::stable_sort(order.begin(), order.end());
  const bool every_microbatch = kind_ == DataParallel::zero2;
  // DeepSpeed's BF16_Optimizer (its own ZeRO-1; runtime/bf16_optimizer.py at 56c522386) keeps
  // whole fp32 gradients: the pipeline engine's _bf16_reduce_grads all-reduces them
  // (buffered_allreduce_fallback) before each rank steps its shard and all-gathers the bf16
  // parameters. Its fp16 ZeRO-1 (zero/stage2.py) reduces each partition to its owner.
  const bool all_reduce = ctx_.parallel.pipeline_engine == PipelineEngine::deepspeed &&
                          ctx_.training.precision == Precision::bf16;
  // Under dualpipe (ZeRO-1 only) each chunk sees half the micro-batches: a layer's reduction
  // waits for its latest backward, whichever micro-batch ran it, and the whole backward ends
  // with the latest of them.
  const bool dual = ctx_.parallel.schedule == PipelineSchedule::dualpipe;
  auto ready_at = [&](int layer, std::size_t m) {
    const std::vector<OpId>& ops = backward_ops_.at(layer);
    if (!dual) return ops[m];
    OpId latest = engine::kNone;
    for (const OpId op : ops)
      if (op != engine::kNone && (latest == engine::kNone || op > latest)) latest = op;
    return latest;
  };
  for (int mb = every_microbatch ? 0 : ctx_.microbatches - 1; mb < ctx_.microbatches; ++mb) {
    const auto m = static_cast<std::size_t>(mb);
    OpId end_of_backward = ready_at(index.front(), m);
    if (dual)
      for (const int layer : index)
        if (const OpId op = ready_at(layer, m);
            op != engine::kNone && (end_of_backward == engine::kNone || op > end_of_backward))
          end_of_backward = op;
    for (const auto& [neg_first, set, k] : order) {
      const auto& bk = set == 0 ? dense[k] : expert[k];
      const OpId ready[] = {ctx_.parallel.overlap
                                ? ready_at(index[static_cast<std::size_t>(-neg_first)], m)
                                : end_of_backward};
      const std::string name = std::string(set == 0 ? "zero bucket " : "zero expert bucket ") +
                               std::to_string(k) + (all_reduce ? " all_reduce" : " reduce_scatter");
      const OpId op = collective(
          reduce_stream_, all_reduce ? CollectiveType::all_reduce : CollectiveType::reduce_scatter,
          set == 0 ? groups_.dense : groups_.expert, bk.params, name,
          static_cast<std::uint32_t>(mb), static_cast<std::uint32_t>(k), ready);
      if (op != engine::kNone) gradient_ops_.push_back(op);
    }
  }
  return gradient_ops_;
}

double ShardedDataParallel::optimizer_params() const {
  double dense = 0, expert = 0;
  for (int c = 0; c < ctx_.parallel.chunks_per_rank(); ++c)
    for (const auto& u : units_[static_cast<std::size_t>(c * ctx_.parallel.pp + stage_)]) {
      dense += u.dense_params;
      expert += u.expert_params;
    }
  return dense / groups_.dense_size + expert / groups_.expert_size;
}

void ShardedDataParallel::after_optimizer(OpId step) {
  if (full_) return;  // FSDP's parameters stay sharded until the next forward gathers them
  double dense = 0, expert = 0;
  for (int c = 0; c < ctx_.parallel.chunks_per_rank(); ++c)
    for (const auto& u : units_[static_cast<std::size_t>(c * ctx_.parallel.pp + stage_)]) {
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

ShardedDataParallel::ShardSizes ShardedDataParallel::shard_sizes(int stage) const {
  RankCoords first;
  first.pp = stage;
  ShardSizes s;
  s.dense = kind_ == DataParallel::hsdp
                ? static_cast<double>(shard_group(ctx_.layout.rank(first)).size())
                : ctx_.parallel.replicas();
  s.expert = std::max(1.0, s.dense / ctx_.parallel.ep);
  return s;
}

MemoryBreakdown ShardedDataParallel::memory(int stage) const {
  const auto& p = ctx_.parallel;
  const StageParameters params = stage_parameters(ctx_, stage);
  const double K = optimizer_state_bytes_per_param(ctx_.training);
  const ShardSizes shards = shard_sizes(stage);
  const double shard_dense = shards.dense;
  const double shard_expert = shards.expert;
  // ZeRO: with mixed-precision Adam (K = 12) stage 1 holds 4Ψ + KΨ/N, stage 2 2Ψ + (2+K)Ψ/N,
  // stage 3 (4+K)Ψ/N (Rajbhandari et al. 2020).
  auto sharded = [&](double bytes_per_param) {
    return bytes_per_param * (params.dense / shard_dense + params.experts / shard_expert);
  };
  const double psi = params.dense + params.experts;
  const double elem = ctx_.parameter_bytes();  // fp32 under autocast
  const double grad = ctx_.gradient_bytes();
  MemoryBreakdown m;
  m.optimizer = sharded(K);
  m.stepped_params = sharded(1.0);
  if (!full_) {
    m.weights = elem * psi;
    m.gradients = kind_ == DataParallel::zero1 ? grad * psi : sharded(grad);
    m.buffers = 2.0 * p.bucket_bytes;  // a reduce-scatter and an all-gather bucket
    return m;
  }
  m.weights = sharded(elem);
  m.gradients = sharded(grad);
  // Gathered units in flight: the one computing plus the prefetched ones (the whole model stays
  // gathered between forward and backward without resharding); a root unit stays gathered
  // through the iteration. Under a zero-bubble schedule a unit gathered for its B is resharded
  // only after its W, so by the end of a B pass every unit of the stage is gathered.
  const UnitSizes& sizes = sizes_[static_cast<std::size_t>(stage)];
  const double gathered =
      p.fsdp.reshard_after_forward && !splits_backward(p.schedule)
          ? std::min(psi, sizes.root +
                              sizes.largest *
                                  (1 + std::max(p.fsdp.prefetch, p.fsdp.forward_prefetch ? 1 : 0)))
          : psi;
  m.buffers = elem * gathered;
  return m;
}

ShardedDataParallel::UnitSizes ShardedDataParallel::measure_units(int stage) const {
  UnitSizes s;
  for (int c = 0; c < ctx_.parallel.chunks_per_rank(); ++c) {
    const auto g = static_cast<std::size_t>(c * ctx_.parallel.pp + stage);
    for (std::size_t i = 0; i < units_[g].size(); ++i) {
      const Unit& u = units_[g][i];
      const double size = u.dense_params + u.expert_params;
      if (static_cast<int>(i) != root_[g]) {
        s.largest = std::max(s.largest, size);
        continue;
      }
      s.root += size;
      // Its first layer in forward order (the embedding) is the last to get its gradient.
      s.root_first = u.layers.front();
      for (const auto& t : local_shard(ctx_.layers[static_cast<std::size_t>(s.root_first)], tp_,
                                       ctx_.num_experts(), ctx_.parallel.ep, 0)
                               .tensors)
        s.root_first_layer += t.count;
    }
  }
  return s;
}

// One unit's unsharded gradients before its reduce-scatter. A root unit's gradient waits from the
// head's backward to the embedding's, next to each block's (the head's part of the root); at the
// embedding's backward its two pieces and the flat gradient they are copied into coexist (2 × the
// root's).
double ShardedDataParallel::backward_gradient_buffers(int stage, int layer) const {
  if (!full_) return 0;
  const UnitSizes& s = sizes_[static_cast<std::size_t>(stage)];
  const double at_root_end = 2 * s.root;
  const double head_waiting = s.root - s.root_first_layer + s.largest;
  const bool root_end = s.root > 0 && layer == s.root_first;
  return ctx_.gradient_bytes() * (layer < 0  ? std::max(at_root_end, head_waiting)
                                  : root_end ? at_root_end
                                             : head_waiting);
}

double ShardedDataParallel::accumulated_gradients(int stage) const {
  if (!full_ || !ctx_.parallel.fsdp.no_sync || ctx_.microbatches <= 1)
    return memory(stage).gradients;
  const StageParameters params = stage_parameters(ctx_, stage);
  return ctx_.gradient_bytes() * (params.dense + params.experts);  // unsharded until the sync
}

}  // namespace clustersim::models
