// Data parallelism as PyTorch DDP runs it (DESIGN.md "What each parallel plan must reproduce"):
// per micro-batch the forward then the backward on the compute stream; during the last
// micro-batch's backward each bucket's all-reduce starts on the comm stream as soon as its last
// gradient exists (or after the whole backward with overlap off); the optimizer step waits for
// every bucket.
#include <string>

#include "models/schedule_builder.hpp"

namespace clustersim::models {

namespace {

using engine::Category;
using engine::OpId;

// Bytes a layer's kernels move: weights read once per micro-batch plus activations written and
// read; backward reads weights and activations and writes weight and input gradients (×2).
double forward_bytes(const LayerCost& l, int elem, int micro_batch) {
  return l.params * elem + l.activation_bytes * micro_batch * elem / 2.0;
}

// Adam keeps fp32 master weights and two moments: per parameter it reads master, m, v and the
// gradient and writes master, m, v and the low-precision weight (28 bytes in mixed precision);
// momentum SGD reads/writes master and momentum (20). ~10 FLOPs per parameter.
constexpr double kOptimizerFlopsPerParam = 10.0;
double optimizer_bytes_per_param(Optimizer o) {
  return o == Optimizer::sgd ? 20.0 : 28.0;
}

}  // namespace

BuiltSchedule build_ddp_schedule(const Scenario& sc) {
  BuiltSchedule out;
  out.layers = expand_model(sc.model, sc.training.seq_len);
  const auto& layers = out.layers;
  const int world = sc.world_size();
  const int elem = bytes_per_element(sc.training.precision);
  const int mb_size = sc.training.micro_batch;
  const long microbatches = sc.num_microbatches();
  const auto precision = static_cast<std::uint8_t>(sc.training.precision);

  engine::ScheduleBuilder b(static_cast<std::uint32_t>(world));
  const auto compute = b.stream("compute");
  const auto comm = b.stream("comm");
  std::vector<engine::Rank> all(static_cast<std::size_t>(world));
  for (int r = 0; r < world; ++r)
    all[static_cast<std::size_t>(r)] = static_cast<engine::Rank>(r);
  const bool reduce = world > 1;
  const engine::GroupId dp = reduce ? b.add_group(all, "dp") : 0;
  if (reduce) out.buckets = assign_buckets(layers, elem, sc.parallel.bucket_bytes);

  double params = total_params(layers);
  std::vector<OpId> bwd_op(layers.size());
  std::vector<OpId> reduce_ops;
  for (int it = 0; it < sc.simulation.iterations; ++it) {
    for (int r = 0; r < world; ++r) {
      const auto rank = static_cast<engine::Rank>(r);
      for (long mb = 0; mb < microbatches; ++mb) {
        const auto m = static_cast<std::uint32_t>(mb);
        for (const auto& l : layers)
          b.compute({rank, compute, Category::forward, l.name + " fwd", m},
                    l.forward_flops * mb_size,
                    static_cast<std::uint64_t>(forward_bytes(l, elem, mb_size)), precision);
        for (std::size_t i = layers.size(); i-- > 0;) {
          const auto& l = layers[i];
          const double extra = recompute_flops(sc, l);
          if (extra > 0)
            b.compute({rank, compute, Category::recompute, l.name + " recompute", m},
                      extra * mb_size, static_cast<std::uint64_t>(forward_bytes(l, elem, mb_size)),
                      precision);
          bwd_op[i] = b.compute(
              {rank, compute, Category::backward, l.name + " bwd", m}, l.backward_flops * mb_size,
              static_cast<std::uint64_t>(2 * forward_bytes(l, elem, mb_size)), precision);
        }
      }
      // Gradient accumulation: only the last micro-batch's backward feeds the all-reduce.
      reduce_ops.clear();
      for (std::size_t k = 0; k < out.buckets.size(); ++k) {
        const auto& bucket = out.buckets[k];
        const OpId ready = sc.parallel.overlap
                               ? bwd_op[static_cast<std::size_t>(bucket.first_layer)]
                               : bwd_op.front();
        const OpId deps[] = {ready};
        engine::ScheduleBuilder::Common c{rank, comm, Category::dp_comm,
                                          "ddp bucket " + std::to_string(k) + " all_reduce"};
        c.deps = deps;
        c.chunk = static_cast<std::uint32_t>(k);
        reduce_ops.push_back(b.collective(c, engine::CollectiveType::all_reduce, dp, bucket.bytes));
      }
      b.compute(
          {rank, compute, Category::optimizer, "optimizer step", engine::kNone, reduce_ops},
          params * kOptimizerFlopsPerParam,
          static_cast<std::uint64_t>(params * optimizer_bytes_per_param(sc.training.optimizer)),
          static_cast<std::uint8_t>(Precision::fp32));
    }
  }
  out.schedule = std::move(b).finish();
  return out;
}

}  // namespace clustersim::models
