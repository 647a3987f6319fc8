// Start-up memory of PyTorch FSDP when the model is built whole on every GPU and then wrapped
// (parallel.fsdp.init: device; docs/memory.md "Start-up").
//
// What happens, in PyTorch's FSDP (FullyShardedDataParallel, FlatParamHandle):
// - each parameter is created by its module on the GPU: one caching-allocator block per tensor,
//   in a segment of its own for anything over 1 MB;
// - each unit is wrapped in turn: its parameters are concatenated into one flat tensor (the
//   originals stay alive while the copy is written), the originals are freed, the rank's shard of
//   the flat tensor is cloned and the unsharded flat tensor freed.
// So the peak is the first unit's concatenation: the whole model plus one unit. The freed
// per-parameter blocks stay in the allocator (PyTorch returns cached segments to the driver
// only on empty_cache() or when a cudaMalloc fails), and a block is never merged with another
// segment: a later tensor larger than the largest parameter cannot be carved from them. FSDP's
// flat shards (parameters, gradients and the optimizer's states, one tensor per unit), its
// gathered units and their unsharded gradients are placed in them best-fit; what finds no room
// takes new segments.
#include <algorithm>
#include <functional>
#include <set>
#include <vector>

#include "models/plans/sharded_data_parallel.hpp"

namespace clustersim::models {

namespace {

// Best fit of `tensors` (bytes, any order) into the free `segments`: a tensor takes the smallest
// segment that holds it, which keeps the rest; returns the bytes that found no segment.
double pack_best_fit(std::vector<double> tensors, std::multiset<double> segments) {
  std::sort(tensors.begin(), tensors.end(), std::greater<>());
  double left_out = 0;
  for (const double t : tensors) {
    const auto it = segments.lower_bound(t);
    if (it == segments.end()) {
      left_out += t;
      continue;
    }
    const double rest = *it - t;
    segments.erase(it);
    if (rest > 0) segments.insert(rest);
  }
  return left_out;
}

}  // namespace

StartupMemory ShardedDataParallel::startup_memory(int stage) const {
  if (!full_ || ctx_.parallel.fsdp.init != FsdpInit::device) return {};
  const auto& p = ctx_.parallel;
  const StageParameters params = stage_parameters(ctx_, stage);
  const double elem = ctx_.parameter_bytes();
  const double grad = ctx_.gradient_bytes();
  const UnitSizes& sizes = sizes_[static_cast<std::size_t>(stage)];
  const ShardSizes shards = shard_sizes(stage);

  // Start-up's blocks: one per parameter tensor this rank builds, all freed by the wrapping.
  std::multiset<double> segments;
  std::vector<double> unit_shards;  // parameters of each unit's shard
  for (int c = 0; c < p.chunks_per_rank(); ++c)
    for (const Unit& u : units_[static_cast<std::size_t>(c * p.pp + stage)]) {
      unit_shards.push_back(u.dense_params / shards.dense + u.expert_params / shards.expert);
      for (int li : u.layers)
        for (const auto& t : local_shard(ctx_.layers[static_cast<std::size_t>(li)], tp_,
                                         ctx_.num_experts(), p.ep, 0)
                                 .tensors)
          segments.insert(elem * t.count);
    }

  StartupMemory s;
  const double whole = elem * (params.dense + params.experts);
  s.peak = whole + elem * (sizes.largest > 0 ? sizes.largest : sizes.root);
  s.cached = whole;

  // Training's flat tensors: per unit its shard of parameters, of gradients and of each
  // optimizer state (fp32 beside a master copy or autocast, else the parameters' dtype); the
  // gathered units; the unsharded gradients waiting for their reduce-scatter, unit by unit.
  const double state_bytes = keeps_master_weights(ctx_.training) || ctx_.training.amp ? 4.0 : elem;
  const int states = static_cast<int>(optimizer_state_bytes_per_param(ctx_.training) / state_bytes);
  std::vector<double> tensors;
  for (const double shard : unit_shards) {
    tensors.push_back(elem * shard);
    tensors.push_back(grad * shard);
    for (int k = 0; k < states; ++k)
      tensors.push_back(state_bytes * shard);
  }
  const double unit = std::max(sizes.largest, sizes.root);
  const double gathered = memory(stage).buffers;
  if (sizes.root > 0) tensors.push_back(elem * sizes.root);
  for (double b = gathered - elem * sizes.root; b > 0.5 * elem * unit && sizes.largest > 0;
       b -= elem * sizes.largest)
    tensors.push_back(elem * sizes.largest);
  for (double b = backward_gradient_buffers(stage, -1); b > 0.5 * grad * unit; b -= grad * unit)
    tensors.push_back(grad * unit);
  s.uncarvable = pack_best_fit(std::move(tensors), std::move(segments));
  return s;
}

}  // namespace clustersim::models
