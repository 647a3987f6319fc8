// PyTorch DistributedDataParallel (DESIGN.md "DDP"): every rank keeps the whole (TP/PP-local)
// model; gradients are all-reduced in buckets (gradient_buckets.hpp) on the comm stream as soon
// as the last micro-batch's backward has produced them, routed experts in buckets of their own
// over the expert-data-parallel group (Megatron keeps them in separate buffers); with
// `overlap: false` every bucket waits for the whole backward. The optimizer steps every local
// parameter. find_unused_parameters (without static_graph) adds the reducer's all-reduce of its
// used-parameter map after the last bucket; join adds the Join context's all-reduce of a
// one-element tensor at the synchronizing (last) micro-batch's forward; the step waits for both.
#pragma once

#include <map>

#include "models/plans/data_parallel.hpp"

namespace clustersim::models {

class Ddp final : public DataParallelStrategy {
 public:
  Ddp(const PlanContext& ctx, const TensorParallelism& tp, ScheduleSink* sink);

  void begin_rank(engine::Rank rank, engine::OpId previous) override;
  void before_layer(int chunk, int layer, bool forward, std::uint32_t mb,
                    std::vector<engine::OpId>& deps) override;
  void after_layer(int chunk, int layer, bool forward, std::uint32_t mb, engine::OpId last,
                   engine::OpId weight_grads) override;
  std::vector<engine::OpId> gradient_ops() override;
  double optimizer_params() const override;
  std::vector<GradientBucket> reported_buckets() const override { return rank0_buckets_; }
  MemoryBreakdown memory(int stage) const override;

 private:
  const PlanContext& ctx_;
  const TensorParallelism& tp_;
  ScheduleSink* sink_;
  engine::StreamId comm_ = 0;
  engine::Rank rank_ = 0;
  std::map<int, engine::OpId> last_backward_;  // layer -> its backward in the latest micro-batch
  engine::OpId join_notify_ = engine::kNone;   // parallel.join's all-reduce this iteration
  std::vector<GradientBucket> rank0_buckets_;
};

}  // namespace clustersim::models
