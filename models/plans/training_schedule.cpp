// One training iteration of a (tp, pp, dp) plan as per-rank op graphs (DESIGN.md "What each
// parallel plan must reproduce"):
// - every rank runs its pipeline stage's steps in the schedule's order (pipeline_order.hpp);
// - a forward step receives the activations of the previous stage, runs its layers with the
//   Megatron tensor-parallel collectives on the compute stream, and sends the result on; a
//   backward step mirrors it with gradients;
// - data parallelism reduces each stage's gradients in DDP buckets on the comm stream as soon as
//   the last micro-batch's backward has produced them; then the optimizer steps.
// Point-to-point transfers use one stream per direction and peer, so a stage's sends and its
// peer's receives pair up in the same order and the pipeline cannot deadlock.
#include <algorithm>
#include <map>
#include <string>
#include <variant>

#include "models/plans/layer_parallelism.hpp"
#include "models/plans/pipeline_order.hpp"
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
double optimizer_bytes_per_param(Optimizer o) { return o == Optimizer::sgd ? 20.0 : 28.0; }

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
    if (sc.parallel.dp > 1) comm_ = b_.stream("comm");
    if (sc.parallel.pp > 1) {
      recv_fwd_ = b_.stream("pp recv act");
      send_fwd_ = b_.stream("pp send act");
      recv_bwd_ = b_.stream("pp recv grad");
      send_bwd_ = b_.stream("pp send grad");
    }
  }

  engine::Schedule build() {
    for (int it = 0; it < sc_.simulation.iterations; ++it)
      for (int r = 0; r < sc_.world_size(); ++r) emit_rank(static_cast<Rank>(r));
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
    const auto& last = out_.layers[static_cast<std::size_t>(chunks_[static_cast<std::size_t>(g)].back())];
    return static_cast<std::uint64_t>(last.activation_bytes * sc_.training.micro_batch *
                                      bytes_per_element(sc_.training.precision) / 2.0);
  }

  void emit_rank(Rank r) {
    const int pp = sc_.parallel.pp;
    const int v = sc_.parallel.virtual_stages;
    const int last_chunk = pp * v - 1;
    const int stage = layout_.coords(r).pp;
    const int m = static_cast<int>(sc_.num_microbatches());
    const auto tp_group = sc_.parallel.tp > 1 ? group(layout_.tp_group(r), "tp") : engine::kNone;
    std::map<int, OpId> last_backward;  // layer -> its backward op in the latest micro-batch

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
        for (int l : layers) last = tp_.forward(b_, r, compute_, tp_group, l, mb, deps);
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
          last = tp_.backward(b_, r, compute_, tp_group, *l, mb, deps, &weight_grads);
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
    emit_data_parallel_and_optimizer(r, stage, last_backward);
  }

  // The layers a stage holds, as this rank's shard (tensors divided by tp), in forward order.
  std::vector<LayerCost> local_layers(int stage, std::vector<int>* index) const {
    std::vector<LayerCost> local;
    for (int c = 0; c < sc_.parallel.virtual_stages; ++c)
      for (int l : chunks_[static_cast<std::size_t>(c * sc_.parallel.pp + stage)]) {
        LayerCost shard = out_.layers[static_cast<std::size_t>(l)];
        for (auto& t : shard.tensors) t.count = tp_.local_params(shard, t.count);
        shard.params = tp_.local_params(shard, shard.params);
        local.push_back(std::move(shard));
        index->push_back(l);
      }
    return local;
  }

  void emit_data_parallel_and_optimizer(Rank r, int stage, const std::map<int, OpId>& last_backward) {
    std::vector<int> index;
    const auto local = local_layers(stage, &index);
    std::vector<OpId> reduce_ops;
    if (sc_.parallel.dp > 1) {
      const auto dp = group(layout_.dp_group(r), "dp");
      const auto buckets = assign_buckets(local, bytes_per_element(sc_.training.precision),
                                          sc_.parallel.bucket_bytes);
      if (r == 0) out_.buckets = buckets;
      // With overlap off every bucket waits for the whole backward: the stage's first layer.
      const OpId end_of_backward = last_backward.at(index.front());
      for (std::size_t k = 0; k < buckets.size(); ++k) {
        const int first = index[static_cast<std::size_t>(buckets[k].first_layer)];
        const OpId ready[] = {sc_.parallel.overlap ? last_backward.at(first) : end_of_backward};
        const std::string name = "ddp bucket " + std::to_string(k) + " all_reduce";
        engine::ScheduleBuilder::Common c{r, comm_, Category::dp_comm, name, engine::kNone, ready};
        c.chunk = static_cast<std::uint32_t>(k);
        reduce_ops.push_back(b_.collective(c, CollectiveType::all_reduce, dp, buckets[k].bytes));
      }
    }
    const double params = total_params(local);
    b_.compute({r, compute_, Category::optimizer, "optimizer step", engine::kNone, reduce_ops},
               params * kOptimizerFlopsPerParam,
               static_cast<std::uint64_t>(params * optimizer_bytes_per_param(sc_.training.optimizer)),
               static_cast<std::uint8_t>(Precision::fp32));
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
