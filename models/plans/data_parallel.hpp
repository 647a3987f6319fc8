// Data parallelism as a strategy (DESIGN.md "DDP", "FSDP / ZeRO"): each strategy adds its part of
// a rank's schedule around the layers the pipeline runs (parameter gathers, gradient reductions,
// the optimizer's inputs) and owns its memory terms (weights, gradients, optimizer states and
// communication buffers under its partitioning). The schedule builder and the memory model call
// only this interface; make_data_parallel is the one place that knows the strategies.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/schedule.hpp"
#include "models/gradient_buckets.hpp"
#include "models/plans/plan_context.hpp"

namespace clustersim::models {

class TensorParallelism;

// Bytes one GPU holds, by term.
struct MemoryBreakdown {
  double weights = 0;
  double gradients = 0;
  double optimizer = 0;
  double activations = 0;
  double buffers = 0;
  // Parameters whose update this rank's optimizer step computes (all it holds, or its ZeRO/FSDP
  // shard): what sizes the step's temporaries. Not memory itself, so not in total().
  double stepped_params = 0;
  double total() const { return weights + gradients + optimizer + activations + buffers; }
};

// What start-up leaves on one GPU before the first step (parallel.fsdp.init, docs/memory.md
// "Start-up"), in bytes.
struct StartupMemory {
  double peak = 0;    // tensors at start-up's peak
  double cached = 0;  // freed blocks start-up leaves in the caching allocator's segments
  // Training's model-state tensors too large to be carved from those segments.
  double uncarvable = 0;
};

// Parameters a rank of a pipeline stage holds before data-parallel sharding: its TP shard of the
// stage's layers; routed experts (its E/ep of them) apart, as they are replicated over the
// expert-data-parallel group only.
struct StageParameters {
  double dense = 0;
  double experts = 0;
};
StageParameters stage_parameters(const PlanContext& ctx, int stage);

// A rank's local parameters of one layer: its TP shard and, of the routed experts, those of
// expert-parallel index `ep_index`.
LayerCost local_shard(const LayerCost& layer, const TensorParallelism& tp, int num_experts, int ep,
                      int ep_index);

// The stage's layers (all chunks, forward order) as rank `rank` holds them: tensors divided by
// TP, only its own routed experts; `experts` selects the routed experts' tensors (true) or the
// rest (false). `index` (optional) receives each layer's global index.
std::vector<LayerCost> local_layers(const PlanContext& ctx, const TensorParallelism& tp,
                                    engine::Rank rank, bool experts, std::vector<int>* index);

// Optimizer state bytes per parameter (K): Adam's two moments, momentum for SGD, plus an fp32
// master copy of the weights under mixed precision (16-bit precision with master_weights: fp32
// moments too, K = 12 for Adam); pure 16-bit training keeps its moments in the 16-bit dtype
// (K = 4 for Adam); fp32 training K = 8; autocast (training.amp) K = 8, its fp32 parameters
// being the master.
double optimizer_state_bytes_per_param(const TrainingConfig& training);
// Whether the optimizer steps an fp32 master copy (16-bit precision with master_weights).
bool keeps_master_weights(const TrainingConfig& training);

class DataParallelStrategy {
 public:
  virtual ~DataParallelStrategy() = default;

  // Starts rank `rank`'s iteration; `previous` is its last op of the iteration before (or kNone).
  virtual void begin_rank(engine::Rank rank, engine::OpId previous) = 0;
  // Around layer `layer` of global chunk `chunk` in a forward or backward step: a strategy may
  // issue ops before the layer and add what its compute must wait for to `deps`.
  virtual void before_layer(int /*chunk*/, int /*layer*/, bool /*forward*/, std::uint32_t /*mb*/,
                            std::vector<engine::OpId>& /*deps*/) {}
  // `last`: the layer's last op; `weight_grads`: the op producing its weight gradients.
  virtual void after_layer(int chunk, int layer, bool forward, std::uint32_t mb, engine::OpId last,
                           engine::OpId weight_grads) = 0;
  // After the last pipeline step: the gradient reductions the optimizer step waits for.
  virtual std::vector<engine::OpId> gradient_ops() = 0;
  // Parameters this rank's optimizer steps.
  virtual double optimizer_params() const = 0;
  // After the optimizer step (ZeRO-1/2 all-gather the updated parameters).
  virtual void after_optimizer(engine::OpId /*step*/) {}
  // Rank 0's gradient buckets, for reports (empty where the strategy has none).
  virtual std::vector<GradientBucket> reported_buckets() const { return {}; }

  // Weights, gradients, optimizer states and buffers of a rank of pipeline stage `stage`
  // (activations are the pipeline's and tensor parallelism's).
  virtual MemoryBreakdown memory(int stage) const = 0;
  // Gradient bytes held between the micro-batches of a step, from a layer's first backward to
  // the step: memory().gradients, unless gradients accumulate unsharded (FSDP's no_sync) and
  // are sharded only by the last micro-batch's reduce-scatter.
  virtual double accumulated_gradients(int stage) const { return memory(stage).gradients; }
  // Unsharded gradient bytes waiting for their reduction during the backward of layer `layer`
  // (FSDP's unit before its reduce-scatter; -1: the most at any layer); not part of
  // memory().buffers.
  virtual double backward_gradient_buffers(int /*stage*/, int /*layer*/) const { return 0; }
  // Start-up's memory on a rank of stage `stage`: none unless the model is built whole on the
  // GPU before it is sharded.
  virtual StartupMemory startup_memory(int /*stage*/) const { return {}; }
};

// `sink` may be null when only memory() is asked for.
std::unique_ptr<DataParallelStrategy> make_data_parallel(DataParallel kind, const PlanContext& ctx,
                                                         const TensorParallelism& tp,
                                                         ScheduleSink* sink);

}  // namespace clustersim::models
