// Mixture-of-experts layers under expert parallelism (DESIGN.md "EP";
// docs/parallelism.md "Mixture of experts"). An MoE block's "Lk.mlp" runs, on the compute stream
// (every step is on the critical path):
//   router → dispatch all-to-all over the EP group → the rank's experts → combine all-to-all →
//   shared experts (dense, on every rank);
// backward mirrors it: combine-grad all-to-all, expert backward, dispatch-grad all-to-all, router
// and shared-expert backward. Experts are split E/ep per rank (and over TP like a dense MLP).
// The one exception: inside dualpipe's F&B pairs the all-to-alls run on an EP stream of their own
// beside the other micro-batch's compute (forward_phase / backward_phase).
//
// Load convention: a rank holds T = micro_batch · seq_len tokens and sends T · top_k token copies.
// The busiest EP rank receives f × that mean (f = moe.imbalance, the hottest expert's share; with
// one expert per rank exactly the hottest expert), capped at the capacity cf × the mean (tokens
// beyond capacity are dropped: GShard/Switch); every rank waits for it since the combine
// all-to-all synchronizes the group. With ep = 1 there is no rank to be imbalanced against: f = 1.
//   load    = T · top_k · min(f, cf)               token copies on the pace-setting rank
//   bytes   = load · hidden · element size         each all-to-all's total buffer (collectives.hpp)
//   FLOPs   = load · 2 · hidden · ffn · matrices / tp   expert forward (backward twice)
// The all-to-all is simulated uniform, sized so the busiest receiver's volume is right: an
// all-to-all ends when its busiest receiver does.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "engine/schedule.hpp"
#include "models/model_costs.hpp"
#include "models/plans/layer_kernels.hpp"
#include "models/plans/plan_context.hpp"

namespace clustersim::models {

// `layer` reduced to the tensors a rank of expert-parallel index `ep_index` holds: every dense
// tensor and its own E/ep routed experts (experts are placed contiguously: e / (E/ep) = ep_index).
// `experts` selects the routed-expert tensors (true) or the rest (false); counts are unchanged.
LayerCost select_tensors(const LayerCost& layer, bool experts, int num_experts, int ep,
                         int ep_index);

// The pace-setting rank's routed copies over the balanced T·top_k: min(f, cf), f = 1 at ep 1.
double routed_load_factor(const MoeSpec& moe, int ep);

// Whether `name` (an op's name, without its micro-batch) is a rank's routed-experts compute:
// "Lk.mlp fwd experts", "... recompute experts", "... bwd experts", "... bwd-w experts" (the
// ops ExpertParallelism emits; not the shared experts). Their FLOPs carry the pace-setting rank's
// load, routed_load_factor × the mean (metrics.cpp counts the mean).
bool is_routed_experts_op(std::string_view name);

class ExpertParallelism {
 public:
  // `kernels` (optional, it must outlive this): the kernel lists of the router, experts and shared
  // experts ops (layer_kernels.hpp).
  explicit ExpertParallelism(const PlanContext& context, const LayerKernels* kernels = nullptr);

  // The MoE part of the layer's forward (or its recompute, `category`), after `deps`; clears them.
  engine::OpId forward(engine::ScheduleBuilder& b, engine::Rank rank, engine::StreamId stream,
                       engine::GroupId ep_group, const LayerCost& layer, std::uint32_t mb,
                       std::vector<engine::OpId>& deps, engine::Category category) const;
  // Its backward; `*weight_grads` receives the op after which all of the layer's weight gradients
  // exist (the router and shared-expert backward, the last one). With `input_only` (the B pass of
  // a schedule that splits the backward: dualpipe) each part computes its input gradients alone
  // (the share of its kernels that are not weight gradients: LayerKernels::moe_split) and
  // weight_gradients() emits the rest later; `*weight_grads` is then kNone.
  engine::OpId backward(engine::ScheduleBuilder& b, engine::Rank rank, engine::StreamId stream,
                        engine::GroupId ep_group, const LayerCost& layer, std::uint32_t mb,
                        std::vector<engine::OpId>& deps, engine::OpId* weight_grads,
                        bool input_only = false) const;
  // The W pass of an MoE block: the weight gradients of its shared experts, experts and router,
  // after `deps` (its B pass).
  engine::OpId weight_gradients(engine::ScheduleBuilder& b, engine::Rank rank,
                                engine::StreamId stream, const LayerCost& layer, std::uint32_t mb,
                                std::span<const engine::OpId> deps) const;

  // The same passes cut where an all-to-all starts, for dualpipe's F&B pairs
  // (docs/dualpipe.md): phase 0 runs the router (backward: the shared experts) and
  // issues the first all-to-all on `comm`; phase 1 the experts and the second all-to-all on
  // `comm`; phase 2 the shared experts (backward: the router). Each phase starts after `deps` and
  // leaves its last op in them; it returns that op, or kNone where it emitted nothing. With `comm`
  // = `stream` the three phases are forward() (backward()) op for op.
  engine::OpId forward_phase(engine::ScheduleBuilder& b, engine::Rank rank, engine::StreamId stream,
                             engine::StreamId comm, engine::GroupId ep_group,
                             const LayerCost& layer, std::uint32_t mb,
                             std::vector<engine::OpId>& deps, engine::Category category,
                             int phase) const;
  engine::OpId backward_phase(engine::ScheduleBuilder& b, engine::Rank rank,
                              engine::StreamId stream, engine::StreamId comm,
                              engine::GroupId ep_group, const LayerCost& layer, std::uint32_t mb,
                              std::vector<engine::OpId>& deps, int phase,
                              bool input_only = false) const;

  // Per micro-batch on the pace-setting rank, as in the header comment.
  double routed_copies() const;  // load
  // One all-to-all's bytes: the routed token copies' hidden states, in bf16 (the combine and its
  // gradient) or, with parallel.fp8_comm, in fp8 where the next GEMM takes fp8 (the dispatch and
  // the gradient sent back to the experts' down-projection).
  std::uint64_t all_to_all_bytes(bool feeds_fp8_gemm = false) const;
  double expert_forward_flops() const;  // FLOPs of the rank's experts' forward
  double router_forward_flops() const;  // 2 · T · h · E / tp
  double shared_forward_flops() const;  // shared experts, as a dense MLP, / tp

 private:
  // One compute part of the backward: its name, full FLOPs and bytes, kernel list and split.
  enum class MoeBackwardPart { shared, experts, router };
  struct BackwardPart {
    const char* name;
    double flops;
    double bytes;
    std::uint32_t list;
    LayerKernels::SplitBackward split;
  };
  BackwardPart backward_part(MoeBackwardPart part) const;

  const LayerKernels* kernels_ = nullptr;
  const MoeSpec* moe_ = nullptr;
  int ep_ = 1;
  int tp_ = 1;
  int elem_ = 2;
  int wire_elem_ = 2;  // fp8_comm: 1
  std::uint8_t precision_ = 0;
  double tokens_ = 0;  // T
  double hidden_ = 0;
  double flops_per_copy_ = 0;  // 2 · h · ffn · matrices
  double expert_params_ = 0;   // one expert's parameters
};

}  // namespace clustersim::models
