// One training iteration of a (tp, pp, dp) plan as per-rank op graphs (DESIGN.md "What each
// parallel plan must reproduce"):
// - every rank runs its pipeline stage's steps in the schedule's order (pipeline_order.hpp);
// - a forward step receives the activations of the previous stage, runs its layers with the
//   Megatron tensor-parallel collectives on the compute stream, and sends the result on; a
//   backward step mirrors it with gradients;
// - data parallelism reduces each stage's gradients in DDP buckets on the comm stream as soon as
//   the last micro-batch's backward has produced them (routed experts in buckets of their own over
//   the expert-data-parallel group, as Megatron keeps them in separate buffers); then the
//   optimizer steps. ZeRO and FSDP replace this (sharded_data_parallel.hpp).
// Point-to-point transfers use one stream per direction and peer, so a stage's sends and its
// peer's receives pair up in the same order and the pipeline cannot deadlock.
#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <variant>

#include "models/plans/layer_parallelism.hpp"
#include "models/plans/pipeline_order.hpp"
#include "models/plans/sharded_data_parallel.hpp"
#include "models/plans/stage_partition.hpp"
#include "models/rank_layout.hpp"
#include "models/schedule_builder.hpp"

namespace clustersim::models {

namespace {

using engine::Category;
using engine::CollectiveType;
using engine::OpId;
using engine::Rank;

// Adam keeps fp32 master weights and two moments: per parameter it reads master, m, v and the
// gradient and writes master, m, v and the low-precision weight (28 bytes in mixed precision);
// momentum SGD reads/writes master and momentum (20). ~10 FLOPs per parameter.
constexpr double kOptimizerFlopsPerParam = 10.0;
double optimizer_bytes_per_param(Optimizer o) {
  return o == Optimizer::sgd ? 20.0 : 28.0;
}

class Builder {
 public:
  Builder(const Scenario& sc, BuiltSchedule& out)
      : sc_(sc),
        out_(out),
        layout_(sc.parallel.tp, sc.parallel.ep, sc.parallel.dp, sc.parallel.pp, sc.parallel.order),
        b_(static_cast<std::uint32_t>(sc.world_size())),
        tp_(sc, out.layers) {
    chunks_ = partition_layers(sc, out.layers);
    compute_ = b_.stream("compute");
    if (sc.parallel.dp > 1 && sc.parallel.data_parallel != DataParallel::ddp)
      sharded_ = std::make_unique<ShardedDataParallel>(
          sc, layout_, out.layers, chunks_, tp_, b_,
          [this](const std::vector<Rank>& ranks, const char* kind) { return group(ranks, kind); });
    else if (sc.parallel.dp > 1)
      comm_ = b_.stream("comm");
    if (const auto* t = std::get_if<TransformerSpec>(&sc.model.body); t && t->moe)
      num_experts_ = t->moe->num_experts;
    if (sc.parallel.pp > 1) {
      recv_fwd_ = b_.stream("pp recv act");
      send_fwd_ = b_.stream("pp send act");
      recv_bwd_ = b_.stream("pp recv grad");
      send_bwd_ = b_.stream("pp send grad");
    }
  }

  engine::Schedule build() {
    optimizer_.assign(static_cast<std::size_t>(sc_.world_size()), engine::kNone);
    for (int it = 0; it < sc_.simulation.iterations; ++it)
      for (int r = 0; r < sc_.world_size(); ++r) {
        emit_rank(static_cast<Rank>(r));
        // Every rank issues about as many ops as the first: size the arrays once instead of
        // letting them double (which would hold up to twice the memory at the end).
        if (it == 0 && r == 0)
          b_.reserve(b_.size() * static_cast<std::size_t>(sc_.world_size()) *
                         static_cast<std::size_t>(sc_.simulation.iterations) * 11 / 10,
                     b_.peek().deps.size() * static_cast<std::size_t>(sc_.world_size()) *
                         static_cast<std::size_t>(sc_.simulation.iterations) * 11 / 10);
      }
    return std::move(b_).finish();
  }

 private:
  engine::GroupId group(const std::vector<Rank>& ranks, const char* kind) {
    auto [it, inserted] = groups_.try_emplace(ranks, 0);
    if (inserted) {
      const int index = group_count_[kind]++;
      it->second = b_.add_group(ranks, std::string(kind) + "[" + std::to_string(index) + "]");
    }
    return it->second;
  }

  Rank stage_rank(Rank r, int stage) const {
    auto c = layout_.coords(r);
    c.pp = stage;
    return layout_.rank(c);
  }

  // Bytes of the activation (or its gradient) leaving chunk g: b·s·h for transformers (a 1/t
  // shard with sequence parallelism), the last layer's activation for layer lists.
  std::uint64_t boundary_bytes(int g) const {
    if (const auto bytes = tp_.boundary_bytes(); bytes > 0) return bytes;
    const auto& last =
        out_.layers[static_cast<std::size_t>(chunks_[static_cast<std::size_t>(g)].back())];
    return static_cast<std::uint64_t>(last.activation_bytes * sc_.training.micro_batch *
                                      bytes_per_element(sc_.training.precision) / 2.0);
  }

  void emit_rank(Rank r) {
    const int pp = sc_.parallel.pp;
    const int v = sc_.parallel.virtual_stages;
    const int last_chunk = pp * v - 1;
    const int stage = layout_.coords(r).pp;
    const int m = static_cast<int>(sc_.num_microbatches());
    LayerGroups groups;
    if (sc_.parallel.tp > 1) groups.tp = group(layout_.tp_group(r), "tp");
    if (sc_.parallel.ep > 1) groups.ep = group(layout_.ep_group(r), "ep");
    std::map<int, OpId> last_backward;  // layer -> its backward op in the latest micro-batch
    if (sharded_) sharded_->begin_rank(r, optimizer_[r]);

    for (const auto& step : pipeline_order(sc_.parallel.schedule, stage, pp, m, v)) {
      const int g = step.chunk * pp + stage;
      const auto& layers = chunks_[static_cast<std::size_t>(g)];
      const auto mb = static_cast<std::uint32_t>(step.microbatch);
      // Tags tell the micro-batch, chunk and direction apart on one pair of ranks.
      const auto tag = static_cast<std::uint32_t>((step.microbatch * (last_chunk + 1) + g) * 2 +
                                                  (step.forward ? 0 : 1));
      std::vector<OpId> deps;
      if (step.forward) {
        if (g > 0)
          deps.push_back(b_.recv({r, recv_fwd_, Category::pp_comm, "recv act", mb},
                                 stage_rank(r, (g - 1) % pp), boundary_bytes(g - 1), tag));
        OpId last = engine::kNone;
        for (int l : layers) {
          if (sharded_) sharded_->before_layer(g, l, true, mb, deps);
          last = tp_.forward(b_, r, compute_, groups, l, mb, deps);
          if (sharded_) sharded_->after_layer(g, l, true, mb, last, engine::kNone);
        }
        if (g < last_chunk) {
          const OpId after[] = {last};
          b_.send({r, send_fwd_, Category::pp_comm, "send act", mb, after},
                  stage_rank(r, (g + 1) % pp), boundary_bytes(g),
                  static_cast<std::uint32_t>((step.microbatch * (last_chunk + 1) + g + 1) * 2));
        }
      } else {
        if (g < last_chunk)
          deps.push_back(b_.recv({r, recv_bwd_, Category::pp_comm, "recv grad", mb},
                                 stage_rank(r, (g + 1) % pp), boundary_bytes(g), tag));
        OpId last = engine::kNone;
        for (auto l = layers.rbegin(); l != layers.rend(); ++l) {
          OpId weight_grads = engine::kNone;
          if (sharded_) sharded_->before_layer(g, *l, false, mb, deps);
          last = tp_.backward(b_, r, compute_, groups, *l, mb, deps, &weight_grads);
          if (sharded_) sharded_->after_layer(g, *l, false, mb, last, weight_grads);
          last_backward[*l] = weight_grads;
        }
        if (g > 0) {
          const OpId after[] = {last};
          b_.send({r, send_bwd_, Category::pp_comm, "send grad", mb, after},
                  stage_rank(r, (g - 1) % pp), boundary_bytes(g - 1),
                  static_cast<std::uint32_t>((step.microbatch * (last_chunk + 1) + g - 1) * 2 + 1));
        }
      }
    }
    emit_data_parallel_and_optimizer(r, last_backward);
  }

  // The layers a stage holds, as this rank's shard (tensors divided by tp, its own experts), in
  // forward order; `experts` picks the routed experts' tensors (true) or the rest (false).
  std::vector<LayerCost> local_layers(Rank r, bool experts, std::vector<int>* index) const {
    const auto c0 = layout_.coords(r);
    std::vector<LayerCost> local;
    for (int c = 0; c < sc_.parallel.virtual_stages; ++c)
      for (int l : chunks_[static_cast<std::size_t>(c * sc_.parallel.pp + c0.pp)]) {
        LayerCost shard = local_shard(out_.layers[static_cast<std::size_t>(l)], tp_, num_experts_,
                                      sc_.parallel.ep, c0.ep);
        if (num_experts_ > 0)
          shard = select_tensors(shard, experts, num_experts_, sc_.parallel.ep, c0.ep);
        else if (experts)
          shard.tensors.clear(), shard.params = 0;
        local.push_back(std::move(shard));
        if (index) index->push_back(l);
      }
    return local;
  }

  // DDP: one bucket set over the dp group (dense tensors), one over the expert-dp group (routed
  // experts), issued in the order they become ready.
  std::vector<OpId> ddp_buckets(Rank r, const std::map<int, OpId>& last_backward) {
    std::vector<int> index;
    const auto dense = local_layers(r, false, &index);
    const auto expert = local_layers(r, true, nullptr);
    const int elem = bytes_per_element(sc_.training.precision);
    const auto sets = std::array{assign_buckets(dense, elem, sc_.parallel.bucket_bytes),
                                 assign_buckets(expert, elem, sc_.parallel.bucket_bytes)};
    const auto expert_ranks = layout_.expert_dp_group(r);
    const std::array<engine::GroupId, 2> on = {
        group(layout_.dp_group(r), "dp"),
        expert_ranks.size() > 1 ? group(expert_ranks, "expert_dp") : engine::kNone};
    if (r == 0) out_.buckets = sets[0];
    std::vector<std::tuple<int, int, std::size_t>> order;  // (-first layer, set, bucket)
    for (int s = 0; s < 2; ++s)
      for (std::size_t k = 0; k < sets[static_cast<std::size_t>(s)].size(); ++k)
        order.emplace_back(-sets[static_cast<std::size_t>(s)][k].first_layer, s, k);
    std::stable_sort(order.begin(), order.end());
    // With overlap off every bucket waits for the whole backward: the stage's first layer.
    const OpId end_of_backward = last_backward.at(index.front());
    std::vector<OpId> reduce_ops;
    for (const auto& [neg_first, s, k] : order) {
      if (on[static_cast<std::size_t>(s)] == engine::kNone) continue;
      const auto& bucket = sets[static_cast<std::size_t>(s)][k];
      const int first = index[static_cast<std::size_t>(-neg_first)];
      const OpId ready[] = {sc_.parallel.overlap ? last_backward.at(first) : end_of_backward};
      // Common holds a string_view: the name must outlive the call.
      const std::string name = std::string(s == 0 ? "ddp bucket " : "ddp expert bucket ") +
                               std::to_string(k) + " all_reduce";
      engine::ScheduleBuilder::Common c{r, comm_, Category::dp_comm, name, engine::kNone, ready};
      c.chunk = static_cast<std::uint32_t>(k);
      reduce_ops.push_back(b_.collective(c, CollectiveType::all_reduce,
                                         on[static_cast<std::size_t>(s)], bucket.bytes));
    }
    return reduce_ops;
  }

  void emit_data_parallel_and_optimizer(Rank r, const std::map<int, OpId>& last_backward) {
    std::vector<OpId> reduce_ops;
    double params = 0;
    if (sharded_) {
      reduce_ops = sharded_->gradient_ops();
      params = sharded_->optimizer_params();
    } else {
      if (sc_.parallel.dp > 1) reduce_ops = ddp_buckets(r, last_backward);
      params = total_params(local_layers(r, false, nullptr)) +
               total_params(local_layers(r, true, nullptr));
    }
    const OpId step = b_.compute(
        {r, compute_, Category::optimizer, "optimizer step", engine::kNone, reduce_ops},
        params * kOptimizerFlopsPerParam,
        static_cast<std::uint64_t>(params * optimizer_bytes_per_param(sc_.training.optimizer)),
        static_cast<std::uint8_t>(Precision::fp32));
    optimizer_[r] = step;
    if (sharded_) sharded_->after_optimizer(step);
  }

  const Scenario& sc_;
  BuiltSchedule& out_;
  RankLayout layout_;
  engine::ScheduleBuilder b_;
  LayerParallelism tp_;
  std::vector<std::vector<int>> chunks_;
  engine::StreamId compute_ = 0, comm_ = 0;
  engine::StreamId recv_fwd_ = 0, send_fwd_ = 0, recv_bwd_ = 0, send_bwd_ = 0;
  std::map<std::vector<Rank>, engine::GroupId> groups_;
  std::map<std::string, int> group_count_;
  std::unique_ptr<ShardedDataParallel> sharded_;
  int num_experts_ = 0;
  std::vector<OpId> optimizer_;  // per rank: its latest optimizer step
};

}  // namespace

BuiltSchedule build_training_schedule(const Scenario& sc) {
  BuiltSchedule out;
  out.layers = expand_model(sc.model, std::max(1, sc.training.seq_len));
  out.partition = partition_layers(sc, out.layers);
  Builder builder(sc, out);
  out.schedule = builder.build();
  return out;
}

}  // namespace clustersim::models
