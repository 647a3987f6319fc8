// What one GPU must hold (DESIGN.md "Memory model"; docs/memory.md), for every pipeline stage,
// reporting the rank that needs the most:
// - weights, gradients and optimizer states of the rank's shard (its stage's layers, divided by
//   tp, experts also by ep), partitioned over the data-parallel group as ZeRO / FSDP do
//   (Rajbhandari et al. 2020), with or without an fp32 master copy (training.master_weights);
// - activations from the kernels' saved tensors (kernels/saved_tensors.hpp) under the recompute
//   policy, walked layer by layer through the stage's pipeline order: they grow at each forward,
//   shrink at each backward, a recomputed block comes back before its backward, and each op's
//   transient working memory (attention scores, the logits' gradients) comes on top;
// - gradients as they appear (PyTorch allocates a parameter's gradient at its first backward and
//   frees it at zero_grad) or persistent (gradient_as_bucket_view: one bucket buffer);
// - buffers: DDP's bucket copy of the gradients, ZeRO's buckets, FSDP's gathered units in flight,
//   the pipeline's send/receive buffers, the optimizer step's temporaries;
// - overheads outside the tensors: the CUDA context, cuBLAS/cuBLASLt workspaces, NCCL's buffers per
//   communicator, and the caching allocator's fragmentation as a band above the peak.
// The peak is the largest total over the walk and the optimizer step, and says where it happens.
#pragma once

#include <algorithm>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/schedule.hpp"
#include "engine/timeline.hpp"
#include "models/plans/data_parallel.hpp"
#include "models/plans/training_schedule.hpp"

namespace clustersim::models {

// Bytes outside the tensors, per GPU (docs/memory.md "What is counted").
struct MemoryOverheads {
  double cuda_context = 0;   // driver context and loaded kernels (outside the allocator)
  double workspaces = 0;     // cuBLAS + cuBLASLt workspaces (taken from the caching allocator)
  double nccl = 0;           // NCCL's buffers for the rank's communicators (outside the allocator)
  double fragmentation = 0;  // the allocator's reserved-but-free share: the "tight" band, not
                             // part of the peak
  // Segments start-up left in the allocator that training's tensors could not reuse
  // (parallel.fsdp.init: device): reserved, not needed (a failing cudaMalloc frees them first).
  double startup_cache = 0;
};

// A change to the plan that was re-estimated: `change` reads as --set flags.
struct MemorySuggestion {
  std::string change;  // "training.recompute=selective"
  double peak_bytes = 0;
  bool fits = false;
  std::string verdict;
};

// Changes on several axes applied together, each written as a `--set` flag.
struct MemoryCombination {
  std::vector<std::string> changes;
  double peak_bytes = 0;
  bool fits = false;
  std::string verdict;
  // The plan search's closed-form iteration time with the changes over the same estimate without
  // them (docs/plan-search.md "Ranking"): what the changes cost, not a simulated figure.
  double estimated_time_ratio = 0;
  // "--set a --set b": the changes as a command line takes them.
  std::string as_set_flags() const;
};

struct MemoryPoint {
  double time_s = 0;
  double bytes = 0;
};

enum class MemoryVerdict { fits, tight, does_not_fit };
std::string_view to_string(MemoryVerdict verdict);

struct MemoryEstimate {
  MemoryBreakdown peak;  // at the peak of the rank that needs the most
  MemoryOverheads overheads;
  std::string phase;  // where that peak happens: "backward of lm_head, micro-batch 1", ...
  engine::Rank peak_rank = 0;
  int peak_stage = 0;
  std::vector<MemoryBreakdown> per_stage;  // each stage's own peak; index: pipeline stage
  std::vector<std::string> per_stage_phase;
  // Most activation bytes the stage's micro-batches hold at once (saved tensors only: no
  // transient, no recompute), per stage.
  std::vector<double> per_stage_saved_activations;
  // Weights, all gradients and optimizer states of the peak rank, whenever they exist.
  double model_states = 0;
  double capacity = 0;  // the GPU's memory
  // Host memory (parallel.offload): what a rank of each stage keeps there, the node that holds
  // the most (the sum of its ranks'), and the node's host memory (cluster.host.memory).
  std::vector<double> host_per_stage;
  double host_per_node = 0;
  double host_capacity = 0;
  double fragmentation_share = 0;
  // Tensors at start-up's peak on the peak rank (parallel.fsdp.init: device: the whole model built
  // on the GPU and one unit flattened); 0 when the model arrives sharded.
  double startup_peak = 0;
  std::vector<MemorySuggestion> suggestions;  // when it does not fit or is tight
  std::optional<MemoryCombination> combined;  // when no suggestion fits alone
  std::vector<MemoryPoint> timeline;          // the peak rank over the simulated iteration

  // Tensors in PyTorch's caching allocator (torch.cuda.max_memory_allocated).
  double allocated() const { return peak.total() + overheads.workspaces; }
  // Allocated plus what the allocator holds without using it (max_memory_reserved).
  double reserved() const {
    return allocated() + overheads.fragmentation + overheads.startup_cache;
  }
  // What the GPU must hold: allocated plus the context and NCCL (peak_bytes_per_gpu).
  double total() const { return allocated() + overheads.cuda_context + overheads.nccl; }
  // What start-up needs: its tensors and the CUDA context (NCCL's communicators come with the
  // first collective).
  double startup_total() const {
    return startup_peak > 0 ? startup_peak + overheads.cuda_context : 0.0;
  }
  // The most the GPU must hold at any time: training's peak or start-up's.
  double needed() const { return std::max(total(), startup_total()); }
  double headroom() const { return capacity - needed(); }
  bool host_fits() const;  // nothing offloaded, or the node's host memory holds it
  // The GPU holds the peak (and start-up's) and the node's host memory what is offloaded.
  bool fits() const { return total() <= capacity && startup_total() <= capacity && host_fits(); }
  // fits with the fragmentation band too; tight: only without it; does not fit.
  MemoryVerdict verdict() const;
  std::string largest_term() const;  // "optimizer", ...
  // Whether one of `suggestions` fits outright (not merely tight); when none does, the changes
  // are sought together (`combined`).
  bool a_change_alone_fits() const;
};

// The estimate without suggestions or timeline: from the scenario alone (layers and partition are
// derived), or with the built schedule's.
MemoryEstimate estimate_memory_only(const Scenario& scenario);
MemoryEstimate estimate_memory_only(const Scenario& scenario, const BuiltSchedule& built);
// The estimate plus, when the plan is tight or does not fit, the cheapest changes that make it
// fit (recompute, micro-batch, ZeRO stage, tp, pp), each re-estimated.
// `offload_windows` (parallel.offload.activations, after a simulation): per stage, the most
// offloaded activation bytes a GPU held at once (measured_offload_windows, offload.hpp); the
// estimate keeps at least that much on the GPU rather than only its assumed window of two layers.
MemoryEstimate estimate_memory(const Scenario& scenario, const BuiltSchedule& built,
                               std::vector<double> offload_windows = {});

// The memory of rank `rank` over a simulated timeline: activations appear when a layer's forward
// ends and go when its backward ends, recompute brings a block back when it starts, lazily
// allocated gradients appear at their layer's first backward and go after the optimizer step,
// whose temporaries live while it runs. Points are (time, total bytes) at each change.
// `rank_ops`: the rank's ops, in id order (RankRuns::ops_of).
std::vector<MemoryPoint> memory_timeline(const Scenario& scenario, const BuiltSchedule& built,
                                         const engine::Timeline& timeline, engine::Rank rank,
                                         std::span<const engine::OpId> rank_ops);

}  // namespace clustersim::models
