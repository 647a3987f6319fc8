#include "models/plans/ddp.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <tuple>

#include "models/plans/tensor_parallelism.hpp"

namespace clustersim::models {

using engine::OpId;

Ddp::Ddp(const PlanContext& ctx, const TensorParallelism& tp, ScheduleSink* sink)
    : ctx_(ctx), tp_(tp), sink_(sink) {
  // DeepSpeed's PipelineEngine all-reduces from its ReduceGrads step (buffered_allreduce_fallback)
  // on the compute stream, after the pipeline flush.
  if (sink_ != nullptr && ctx.parallel.replicas() > 1)
    comm_ = sink_->ops.stream(ctx.parallel.pipeline_engine == PipelineEngine::deepspeed ? "compute"
                                                                                        : "comm");
}

void Ddp::begin_rank(engine::Rank rank, OpId) {
  rank_ = rank;
  last_backward_.clear();
  join_notify_ = engine::kNone;
}

// PyTorch's Join.notify_join_context: the forward that synchronizes gradients (the last
// micro-batch's; the others run under no_sync) all-reduces a one-element float32 tensor over the
// dp group, asynchronously, and the reducer waits for it when it finalizes the backward.
void Ddp::before_layer(int, int, bool forward, std::uint32_t mb, std::vector<OpId>& deps) {
  if (!ctx_.parallel.join || !forward || ctx_.parallel.replicas() <= 1 ||
      join_notify_ != engine::kNone || mb + 1 != static_cast<std::uint32_t>(ctx_.microbatches))
    return;
  // Issued from the forward's start: after what the forward waits for and, as any NCCL call,
  // after the work already queued on the compute stream.
  std::vector<OpId> after = deps;
  if (const OpId queued = sink_->ops.last_on(rank_, sink_->ops.stream("compute"));
      queued != engine::kNone)
    after.push_back(queued);
  const engine::ScheduleBuilder::Common c{
      rank_, comm_, engine::Category::dp_comm, "ddp join notify all_reduce", mb, after};
  join_notify_ = sink_->ops.collective(c, engine::CollectiveType::all_reduce,
                                       sink_->groups.get(ctx_.layout.dp_group(rank_), "dp"), 4);
}

void Ddp::after_layer(int, int layer, bool forward, std::uint32_t, OpId, OpId weight_grads) {
  if (!forward) last_backward_[layer] = weight_grads;
}

// One bucket set over the dp group (dense tensors), one over the expert-dp group (routed
// experts), issued in the order they become ready.
std::vector<OpId> Ddp::gradient_ops() {
  if (ctx_.parallel.replicas() <= 1) return {};
  std::vector<int> index;
  const auto dense = local_layers(ctx_, tp_, rank_, false, &index);
  const auto expert = local_layers(ctx_, tp_, rank_, true, nullptr);
  const int elem = ctx_.gradient_bytes();
  const auto sets = std::array{assign_buckets(dense, elem, ctx_.parallel.bucket_bytes),
                               assign_buckets(expert, elem, ctx_.parallel.bucket_bytes)};
  const auto expert_ranks = ctx_.layout.expert_dp_group(rank_);
  const std::array<engine::GroupId, 2> on = {
      sink_->groups.get(ctx_.layout.dp_group(rank_), "dp"),
      expert_ranks.size() > 1 ? sink_->groups.get(expert_ranks, "expert_dp") : engine::kNone};
  if (rank_ == 0) rank0_buckets_ = sets[0];
  std::vector<std::tuple<int, int, std::size_t>> order;  // (-first layer, set, bucket)
  for (int s = 0; s < 2; ++s)
    for (std::size_t k = 0; k < sets[static_cast<std::size_t>(s)].size(); ++k)
      order.emplace_back(-sets[static_cast<std::size_t>(s)][k].first_layer, s, k);
  std::stable_sort(order.begin(), order.end());
  // With overlap off every bucket waits for the whole backward: the stage's first layer, or
  // under dualpipe the latest backward of either chunk.
  OpId end_of_backward = last_backward_.at(index.front());
  if (ctx_.parallel.schedule == PipelineSchedule::dualpipe)
    for (const int layer : index)
      if (const OpId op = last_backward_.at(layer);
          op != engine::kNone && (end_of_backward == engine::kNone || op > end_of_backward))
        end_of_backward = op;
  std::vector<OpId> reduce_ops;
  for (const auto& [neg_first, s, k] : order) {
    if (on[static_cast<std::size_t>(s)] == engine::kNone) continue;
    const auto& bucket = sets[static_cast<std::size_t>(s)][k];
    const int first = index[static_cast<std::size_t>(-neg_first)];
    const OpId ready[] = {ctx_.parallel.overlap ? last_backward_.at(first) : end_of_backward};
    // Common holds a string_view: the name must outlive the call.
    const std::string name = std::string(s == 0 ? "ddp bucket " : "ddp expert bucket ") +
                             std::to_string(k) + " all_reduce";
    engine::ScheduleBuilder::Common c{rank_, comm_,         engine::Category::dp_comm,
                                      name,  engine::kNone, ready};
    c.chunk = static_cast<std::uint32_t>(k);
    reduce_ops.push_back(sink_->ops.collective(c, engine::CollectiveType::all_reduce,
                                               on[static_cast<std::size_t>(s)], bucket.bytes));
  }
  if (ctx_.parallel.find_unused_parameters && !ctx_.parallel.static_graph) {
    // The reducer's local_used_map: an int32 per parameter tensor of this rank, all-reduced over
    // the dp group once the last bucket is marked ready (behind it on the comm stream).
    std::uint64_t tensors = 0;
    for (const bool experts : {false, true})
      for (const LayerCost& l : local_layers(ctx_, tp_, rank_, experts, nullptr))
        tensors += l.tensors.size();
    const OpId ready[] = {end_of_backward};
    const engine::ScheduleBuilder::Common c{
        rank_,         comm_, engine::Category::dp_comm, "ddp unused-parameter map all_reduce",
        engine::kNone, ready};
    reduce_ops.push_back(
        sink_->ops.collective(c, engine::CollectiveType::all_reduce, on[0], 4 * tensors));
  }
  if (join_notify_ != engine::kNone) reduce_ops.push_back(join_notify_);
  return reduce_ops;
}

double Ddp::optimizer_params() const {
  return total_params(local_layers(ctx_, tp_, rank_, false, nullptr)) +
         total_params(local_layers(ctx_, tp_, rank_, true, nullptr));
}

MemoryBreakdown Ddp::memory(int stage) const {
  const StageParameters p = stage_parameters(ctx_, stage);
  const double psi = p.dense + p.experts;
  const int elem = ctx_.parameter_bytes();
  const int grad = ctx_.gradient_bytes();
  MemoryBreakdown m;
  m.weights = elem * psi;
  m.gradients = grad * psi;
  m.optimizer = optimizer_state_bytes_per_param(ctx_.training) * psi;
  m.stepped_params = psi;
  // PyTorch DDP copies gradients into flat buckets (gradient_as_bucket_view=False, its default:
  // one more gradient-sized buffer); with gradient_as_bucket_view the gradients are views into
  // the buckets, as in Megatron's DDP.
  m.buffers =
      ctx_.parallel.replicas() > 1 && !ctx_.parallel.gradient_as_bucket_view ? grad * psi : 0.0;
  return m;
}

}  // namespace clustersim::models
