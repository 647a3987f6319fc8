// parallel.offload (docs/offload.md): what ZeRO-Offload / FSDP CPUOffload move
// between a rank's GPU and its host memory each step, what the CPU optimizer step costs, what
// the host then holds, and which plans can offload at all. The schedule builder, the memory
// model and scenario validation call these, so the three agree on one set of figures.
#pragma once

#include <span>

#include "engine/timeline.hpp"
#include "models/plans/data_parallel.hpp"
#include "models/plans/training_schedule.hpp"
#include "models/scenario.hpp"

namespace clustersim::models {

// Adam's update per parameter on the CPU (DeepSpeed's cpu_adam): reads the 16-bit gradient
// (2 B), the fp32 master weight, m and v (12 B), writes master, m, v (12 B) and the updated 16-bit
// weight for the upload (2 B): 28 B; momentum SGD 20 B, SGD without momentum 12 B. The same bytes
// as the GPU step.
double optimizer_step_bytes_per_param(const TrainingConfig& training);
inline constexpr double kOptimizerFlopsPerParam = 10.0;

// Optimizer offload of one rank stepping `params` parameters (its shard).
struct OptimizerOffload {
  double gradients_down = 0;  // bytes device -> host: the gradient shard, gradient dtype
  double params_up = 0;       // bytes host -> device: the updated shard, parameter dtype
  double cpu_step_bytes = 0;  // bytes the CPU step reads and writes in host memory
};
OptimizerOffload optimizer_offload(const TrainingConfig& training, double params);

// What a rank's host memory holds under optimizer offload, from its stage's device terms
// (`states`: the data-parallel strategy's memory(); `gradient_bytes` per element): the
// optimizer states (with the fp32 master) and the gradient shard they are stepped from.
double optimizer_host_bytes(const MemoryBreakdown& states, double gradient_bytes);

// Host bytes of the node that holds the most, when each rank holds host_per_stage[its stage].
double host_bytes_per_node(const Scenario& scenario, const std::vector<double>& host_per_stage);

// Activation offload: which layers' saved activations go to the host (a transformer's blocks;
// every layer of a layer list; the embedding and the head stay), and how many of them the GPU
// holds at once: the layer being computed and the one being copied out in forward, or the one
// being computed and the one prefetched in backward.
bool offloads_activations(const PlanContext& ctx, int layer);
inline constexpr int kActivationOffloadWindow = 2;
// The names' endings of a layer's activation copies to and from the host, which the schedule
// gives them and the memory walks look for.
inline constexpr char kActivationToHost[] = " act d2h";
inline constexpr char kActivationFromHost[] = " act h2d";

// What one rank's offload did in the simulated run (the result's `offload`, the summary's line):
// bytes and busy seconds of its host copies by direction and of its CPU (host-memory) work.
struct OffloadActivity {
  double to_host_bytes = 0, from_host_bytes = 0;
  double to_host_s = 0, host_step_s = 0, from_host_s = 0;
  bool any() const { return to_host_bytes > 0 || from_host_bytes > 0 || host_step_s > 0; }
};
// `rank_ops`: the rank's ops, in id order (RankRuns::ops_of).
OffloadActivity offload_activity(const engine::Schedule& schedule, const engine::Timeline& timeline,
                                 std::span<const engine::OpId> rank_ops);

// Per pipeline stage, the most bytes of offloaded activations the stage's simulated GPUs held at
// once: each layer's from its forward's end to its "act d2h" copy's end, and from its "act h2d"
// reload's start to its backward's end. Empty without parallel.offload.activations.
std::vector<double> measured_offload_windows(const Scenario& scenario, const BuiltSchedule& built,
                                             const engine::Timeline& timeline);

namespace detail {
// Impossible offload combinations, each named by its key (Scenario::fail).
void validate_offload(const Scenario& scenario);
}  // namespace detail

}  // namespace clustersim::models
