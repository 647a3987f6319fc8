// What one GPU must hold (DESIGN.md "Memory model"), for every pipeline stage, reporting the
// rank that needs the most:
// - weights, gradients and optimizer states of the rank's shard (its stage's layers, divided by
//   tp, experts also by ep), partitioned over the data-parallel group as ZeRO / FSDP do: with
//   mixed-precision Adam (K = 12) stage 1 holds 4Ψ + KΨ/N, stage 2 2Ψ + (2+K)Ψ/N, stage 3
//   (4+K)Ψ/N (Rajbhandari et al. 2020);
// - activations after Korthikanti et al. 2022: s·b·h·(10 + 24/t + 5·a·s/(h·t)) bytes per layer
//   with tensor parallelism, s·b·h·(34 + 5·a·s/h)/t with sequence parallelism, the attention
//   core dropped by selective recompute, 2·s·b·h per layer with full recompute; times the
//   micro-batches the pipeline schedule holds in flight on that stage (counted from its order);
// - communication buffers: DDP's bucket copy of the gradients, ZeRO's buckets, FSDP's gathered
//   units in flight, the pipeline's send/receive buffers.
#pragma once

#include <string>
#include <vector>

#include "engine/schedule.hpp"
#include "models/plans/data_parallel.hpp"
#include "models/plans/training_schedule.hpp"

namespace clustersim::models {

struct MemoryEstimate {
  MemoryBreakdown peak;  // of the rank that needs the most
  engine::Rank peak_rank = 0;
  int peak_stage = 0;
  std::vector<MemoryBreakdown> per_stage;  // index: pipeline stage
  double capacity = 0;                     // the GPU's memory
  bool fits() const { return peak.total() <= capacity; }
  std::string largest_term() const;  // "optimizer", ...
};

MemoryEstimate estimate_memory(const Scenario& scenario, const BuiltSchedule& built);

}  // namespace clustersim::models
