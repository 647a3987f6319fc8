// The plan search's analytical model (docs/plan-search.md "Ranking"): one training iteration of
// a plan in closed form, from the model's FLOPs and parameters and the cluster's bandwidths, in
// microseconds of CPU instead of the seconds a simulation takes. It ranks thousands of plans;
// the best few are then simulated (flow model) for the figures the user sees.
#pragma once

#include <memory>
#include <vector>

#include "models/model_costs.hpp"
#include "models/plan_kernel_times.hpp"
#include "models/scenario.hpp"

namespace clustersim::models {

// What an iteration of a plan costs, by term, on the slowest pipeline stage (seconds).
struct PlanEstimate {
  double compute_s = 0;    // forward + backward of every micro-batch
  double recompute_s = 0;  // forward again under selective or full recompute
  double tp_s = 0;         // tensor-parallel collectives (on the critical path)
  double pp_s = 0;         // activations sent between stages
  double ep_s = 0;         // MoE all-to-alls
  double bubble_s = 0;     // pipeline fill and drain
  double dp_s = 0;         // data-parallel communication not hidden behind backward
  double optimizer_s = 0;  // the optimizer step
  double iteration_s = 0;  // the sum
  double bubble_fraction = 0;
  double mfu = 0;
};

// The model's per-sample figures the estimate needs, computed once per search.
struct PlanModelFigures {
  double block_forward_flops = 0;   // per sample, one transformer block (or list layer)
  double block_params = 0;          // dense part of a block
  double block_expert_params = 0;   // routed experts of an MoE block (split by ep)
  double attention_core_flops = 0;  // per sample and block: QKᵀ and AV (selective recompute)
  double edge_forward_flops = 0;    // embedding + LM head, per sample
  double edge_params = 0;
  double model_flops = 0;  // forward + backward per sample, no recompute (MFU)
  int blocks = 0;          // transformer blocks, or list layers
  int moe_blocks = 0;
  double hidden = 0;  // 0 for layer lists
  double top_k = 0;
  bool transformer = false;
  // The kernel model's layer times per distinct shape, shared by the copies of these figures
  // (a transformer on a GPU with kernel figures; otherwise unused and compute is closed-form).
  std::shared_ptr<PlanKernelTimes> kernel_times = std::make_shared<PlanKernelTimes>();
};
PlanModelFigures plan_model_figures(const Scenario& scenario);

PlanEstimate estimate_plan(const Scenario& scenario, const PlanModelFigures& figures);

}  // namespace clustersim::models
