// The kernel lists a plan's compute ops launch (docs/fidelity.md "How ops get kernels"). Built
// once per schedule and per distinct layer shape (every attention block of a model shares one
// list, every dense MLP another), interned in the schedule's KernelTable; an op then names its
// list by index, so kernels cost no memory per op and no work per rank.
//
//   layer role     forward / backward                    recompute (full | selective)
//   embedding      embedding_kernels                     (not recomputed)
//   attention      attention_block_kernels               forward list | attention core forward
//   mlp            mlp_block_kernels (dense)             forward list | -
//   moe            moe_kernels: router, experts, shared  forward lists | -
//   head           lm_head_kernels                       (not recomputed)
//   generic        ResNet-50 preset: resnet50_kernels    forward list | -
//                  any other layer list: none (the roofline costs it: a layer list gives FLOPs
//                  and bytes, not the shapes a kernel needs)
//   optimizer      optimizer_kernels (per distinct parameter count)
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "engine/kernels.hpp"
#include "engine/schedule.hpp"
#include "models/kernels/transformer_kernels.hpp"
#include "models/plans/plan_context.hpp"

namespace clustersim::models {

// The kernel configuration of the context's transformer layers (ctx.transformer must be set):
// the plan's tp, cp, sequence parallelism and micro-batch, the training options' kernel choices.
// `routed_copies`: token copies the pace-setting rank's experts receive per micro-batch (MoE).
kernels::TransformerKernelConfig transformer_kernel_config(const PlanContext& ctx,
                                                           double routed_copies);

class LayerKernels {
 public:
  // `routed_copies`: token copies the pace-setting rank's experts receive per micro-batch
  // (ExpertParallelism::routed_copies); 0 for a dense model.
  LayerKernels(const PlanContext& ctx, engine::KernelTable& table, double routed_copies);

  // Kernel list of layer `layer`'s op (index into ctx.layers), kNone where it has none.
  std::uint32_t forward(int layer) const { return at(forward_, layer); }
  std::uint32_t backward(int layer) const { return at(backward_, layer); }
  // What the backward re-runs first: the forward list (full recompute), the attention core
  // (selective, attention layers), kNone otherwise.
  std::uint32_t recompute(int layer) const { return at(recompute_, layer); }

  // A zero-bubble schedule's backward in two passes (pipeline_order.hpp): B launches the
  // backward list's kernels but the weight-gradient ones ("….wgrad", "….wgrad_reduce"), W those;
  // `weight_share` is W's share of the backward's FLOPs (0.5 where the layer has no list: a
  // linear layer's weight gradient costs what its input gradient does). Built only for schedules
  // that split the backward.
  struct SplitBackward {
    std::uint32_t input = engine::kNone;
    std::uint32_t weight = engine::kNone;
    double weight_share = 0.5;
  };
  SplitBackward split_backward(int layer) const {
    return split_.empty() ? SplitBackward{} : split_[static_cast<std::size_t>(layer)];
  }

  // A backward list cut where Megatron reduces the column-parallel linear's input gradient over
  // TP asynchronously (parallel.tp_async_grad_reduce): `before` ends with that linear's data
  // gradient (the list's last "….dgrad" followed by its "….wgrad"), `beside` is the rest: its
  // weight gradient, which runs while the collective does, and the norm's backward after it. (The
  // norm waits for the reduced gradient in Megatron; a third op for its few short kernels would
  // charge them the host's launch interval, which the host pays while the GEMMs run.) The shares
  // are `before`'s of the list's FLOPs and bytes. No cut (before = kNone) for a list without such
  // a linear. Built only when the plan reduces asynchronously.
  //
  // `lead` and `dgrad` are `before` in two: the kernels before that data-gradient GEMM, and the
  // GEMM alone, beside which sequence parallelism re-gathers the linear's input for its weight
  // gradient (lead = kNone when the GEMM opens the list); `lead_*` are lead's shares.
  struct AsyncSplit {
    std::uint32_t before = engine::kNone, beside = engine::kNone;
    double before_flops = 0, before_bytes = 0;
    std::uint32_t lead = engine::kNone, dgrad = engine::kNone;
    double lead_flops = 0, lead_bytes = 0;
  };
  AsyncSplit async_split(int layer) const {
    return async_.empty() ? AsyncSplit{} : async_[static_cast<std::size_t>(layer)];
  }

  // The MoE ops (expert_parallelism.hpp): one list per part and pass, shared by every MoE block.
  struct MoeLists {
    std::uint32_t router = engine::kNone;
    std::uint32_t experts = engine::kNone;
    std::uint32_t shared = engine::kNone;
  };
  const MoeLists& moe(kernels::Pass pass) const {
    return pass == kernels::Pass::forward ? moe_forward_ : moe_backward_;
  }

  // The MoE backward lists split as split_backward() splits a layer's (built only for schedules
  // that split the backward; every share 0.5 and no lists otherwise).
  struct MoeSplit {
    SplitBackward router, experts, shared;
  };
  const MoeSplit& moe_split() const { return moe_split_; }

  // The optimizer step over `params` parameters in `tensors` tensors; built once per distinct
  // pair (a pipeline stage's ranks share one).
  std::uint32_t optimizer(double params, std::uint64_t tensors);

  // The transformer kernel configuration the lists were built with (tests, reports).
  const kernels::TransformerKernelConfig& config() const { return config_; }

  // Whether `layers` is the resnet50 preset's layer list (same names, FLOPs and parameters):
  // only then do the ResNet-50 kernel shapes apply.
  static bool is_resnet50(const std::vector<LayerCost>& layers);

 private:
  static std::uint32_t at(const std::vector<std::uint32_t>& v, int layer) {
    return v.empty() ? engine::kNone : v[static_cast<std::size_t>(layer)];
  }
  void build_transformer(double routed_copies);
  void build_resnet50();
  void build_split_backward();
  void build_async_split();

  const PlanContext& ctx_;
  engine::KernelTable& table_;
  kernels::TransformerKernelConfig config_;
  std::vector<std::uint32_t> forward_, backward_, recompute_;
  std::vector<SplitBackward> split_;  // per layer, zero-bubble schedules only
  std::vector<AsyncSplit> async_;     // per layer, where TP reduces asynchronously
  MoeLists moe_forward_, moe_backward_;
  MoeSplit moe_split_;
  std::map<std::pair<double, std::uint64_t>, std::uint32_t> optimizer_;
};

}  // namespace clustersim::models
