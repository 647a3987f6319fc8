#include "models/plans/expert_parallelism.hpp"

#include <algorithm>
#include <string>

#include "models/plans/layer_kernels.hpp"

namespace clustersim::models {

using engine::Category;
using engine::CollectiveType;
using engine::OpId;

LayerCost select_tensors(const LayerCost& layer, bool experts, int num_experts, int ep,
                         int ep_index) {
  LayerCost out = layer;
  out.tensors.clear();
  out.params = 0;
  const int per_rank = ep > 0 && num_experts > 0 ? std::max(1, num_experts / ep) : 1;
  for (const auto& t : layer.tensors) {
    const int e = t.expert;
    if ((e >= 0) != experts) continue;
    if (e >= 0 && e / per_rank != ep_index) continue;
    out.tensors.push_back(t);
    out.params += t.count;
  }
  return out;
}

ExpertParallelism::ExpertParallelism(const PlanContext& ctx, const LayerKernels* kernels)
    : kernels_(kernels),
      ep_(ctx.parallel.ep),
      tp_(ctx.parallel.tp),
      elem_(ctx.element_bytes()),
      wire_elem_(ctx.fp8_wire_bytes()),
      precision_(static_cast<std::uint8_t>(ctx.training.precision)) {
  const TransformerSpec* t = ctx.transformer;
  if (t == nullptr || !t->moe) return;
  moe_ = &*t->moe;
  hidden_ = static_cast<double>(t->hidden_size);
  tokens_ = static_cast<double>(ctx.training.micro_batch) * ctx.seq_len();
  const double matrices = t->activation == Activation::swiglu ? 3.0 : 2.0;
  const double ffn = static_cast<double>(moe_->expert_ffn_hidden_size);
  flops_per_copy_ = 2.0 * hidden_ * ffn * matrices;
  expert_params_ = hidden_ * ffn * matrices + (t->bias ? ffn * (matrices - 1) + hidden_ : 0.0);
}

double routed_load_factor(const MoeSpec& moe, int ep) {
  const double f = ep > 1 ? moe.imbalance : 1.0;
  return std::min(f, moe.capacity_factor);
}

bool is_routed_experts_op(std::string_view name) {
  constexpr std::string_view kExperts = " experts", kShared = " shared experts";
  return name.ends_with(kExperts) && !name.ends_with(kShared);
}

double ExpertParallelism::routed_copies() const {
  if (moe_ == nullptr) return 0.0;
  return tokens_ * moe_->top_k * routed_load_factor(*moe_, ep_);
}

std::uint64_t ExpertParallelism::all_to_all_bytes(bool feeds_fp8_gemm) const {
  return static_cast<std::uint64_t>(routed_copies() * hidden_ *
                                    (feeds_fp8_gemm ? wire_elem_ : elem_));
}

double ExpertParallelism::expert_forward_flops() const {
  return routed_copies() * flops_per_copy_ / tp_;
}

// A TP rank's share, as every other FLOP of a TP-split layer: under sequence parallelism it routes
// its own T/tp tokens; without it every TP rank routes all T (the kernels time that), work the
// FLOPs count once, as latent attention's duplicated down-projections.
double ExpertParallelism::router_forward_flops() const {
  return moe_ == nullptr ? 0.0 : 2.0 * tokens_ * hidden_ * moe_->num_experts / tp_;
}

double ExpertParallelism::shared_forward_flops() const {
  return moe_ == nullptr ? 0.0 : moe_->shared_experts * tokens_ * flops_per_copy_ / tp_;
}

OpId ExpertParallelism::forward(engine::ScheduleBuilder& b, engine::Rank rank,
                                engine::StreamId stream, engine::GroupId ep_group,
                                const LayerCost& l, std::uint32_t mb, std::vector<OpId>& deps,
                                Category category) const {
  OpId last = engine::kNone;
  for (int phase = 0; phase < 3; ++phase)
    if (const OpId op =
            forward_phase(b, rank, stream, stream, ep_group, l, mb, deps, category, phase);
        op != engine::kNone)
      last = op;
  deps.clear();
  return last;
}

OpId ExpertParallelism::forward_phase(engine::ScheduleBuilder& b, engine::Rank rank,
                                      engine::StreamId stream, engine::StreamId comm,
                                      engine::GroupId ep_group, const LayerCost& l,
                                      std::uint32_t mb, std::vector<OpId>& deps, Category category,
                                      int phase) const {
  const std::string base = l.name + (category == Category::recompute ? " recompute" : " fwd");
  OpId last = engine::kNone;
  auto emit = [&](auto&& make) {
    last = make(engine::ScheduleBuilder::Common{rank, stream, category, "", mb, deps});
    deps.assign(1, last);
  };
  static const LayerKernels::MoeLists kNoLists;
  const LayerKernels::MoeLists& lists =
      kernels_ != nullptr ? kernels_->moe(kernels::Pass::forward) : kNoLists;
  auto compute = [&](const std::string& name, double flops, double bytes, std::uint32_t list) {
    emit([&](engine::ScheduleBuilder::Common c) {
      c.name = name;
      return b.compute(c, flops, static_cast<std::uint64_t>(bytes), precision_, list);
    });
  };
  auto all_to_all = [&](const std::string& name, bool feeds_fp8_gemm) {
    if (ep_ <= 1) return;
    emit([&](engine::ScheduleBuilder::Common c) {
      c.name = name;
      c.category = Category::ep_comm;
      c.stream = comm;
      return b.collective(c, CollectiveType::all_to_all, ep_group,
                          all_to_all_bytes(feeds_fp8_gemm));
    });
  };
  const double act = tokens_ * hidden_ * elem_;
  const double local_experts = static_cast<double>(moe_->num_experts) / ep_;
  switch (phase) {
    case 0:
      compute(base + " router", router_forward_flops(), hidden_ * moe_->num_experts * elem_ + act,
              lists.router);
      all_to_all(base + " ep dispatch all_to_all", true);
      break;
    case 1:
      compute(
          base + " experts", expert_forward_flops(),
          local_experts * expert_params_ * elem_ / tp_ + 2.0 * routed_copies() * hidden_ * elem_,
          lists.experts);
      all_to_all(base + " ep combine all_to_all", false);
      break;
    default:
      if (moe_->shared_experts > 0)
        compute(base + " shared experts", shared_forward_flops(),
                moe_->shared_experts * expert_params_ * elem_ / tp_ + 2.0 * act, lists.shared);
      break;
  }
  return last;
}

OpId ExpertParallelism::backward(engine::ScheduleBuilder& b, engine::Rank rank,
                                 engine::StreamId stream, engine::GroupId ep_group,
                                 const LayerCost& l, std::uint32_t mb, std::vector<OpId>& deps,
                                 OpId* weight_grads, bool input_only) const {
  OpId last = engine::kNone;
  for (int phase = 0; phase < 3; ++phase)
    if (const OpId op =
            backward_phase(b, rank, stream, stream, ep_group, l, mb, deps, phase, input_only);
        op != engine::kNone)
      last = op;
  *weight_grads = input_only ? engine::kNone : last;
  deps.clear();
  return last;
}

ExpertParallelism::BackwardPart ExpertParallelism::backward_part(MoeBackwardPart part) const {
  static const LayerKernels::MoeLists kNoLists;
  static const LayerKernels::MoeSplit kNoSplit;
  const LayerKernels::MoeLists& lists =
      kernels_ != nullptr ? kernels_->moe(kernels::Pass::backward) : kNoLists;
  const LayerKernels::MoeSplit& split = kernels_ != nullptr ? kernels_->moe_split() : kNoSplit;
  const double act = tokens_ * hidden_ * elem_;
  const double local_experts = static_cast<double>(moe_->num_experts) / ep_;
  // Backward costs twice the forward.
  switch (part) {
    case MoeBackwardPart::shared:
      return {"shared experts", 2.0 * shared_forward_flops(),
              2.0 * (moe_->shared_experts * expert_params_ * elem_ / tp_ + 2.0 * act), lists.shared,
              split.shared};
    case MoeBackwardPart::experts:
      return {"experts", 2.0 * expert_forward_flops(),
              2.0 * (local_experts * expert_params_ * elem_ / tp_ +
                     2.0 * routed_copies() * hidden_ * elem_),
              lists.experts, split.experts};
    case MoeBackwardPart::router:
      break;
  }
  return {"router", 2.0 * router_forward_flops(), 2.0 * (hidden_ * moe_->num_experts * elem_ + act),
          lists.router, split.router};
}

OpId ExpertParallelism::backward_phase(engine::ScheduleBuilder& b, engine::Rank rank,
                                       engine::StreamId stream, engine::StreamId comm,
                                       engine::GroupId ep_group, const LayerCost& l,
                                       std::uint32_t mb, std::vector<OpId>& deps, int phase,
                                       bool input_only) const {
  const std::string base = l.name + " bwd";
  OpId last = engine::kNone;
  auto emit = [&](OpId id) {
    last = id;
    deps.assign(1, last);
  };
  auto common = [&](Category cat, const std::string& name) {
    return engine::ScheduleBuilder::Common{rank, stream, cat, name, mb, deps};
  };
  auto all_to_all = [&](const std::string& name, bool feeds_fp8_gemm) {
    if (ep_ <= 1) return;
    engine::ScheduleBuilder::Common c = common(Category::ep_comm, name);
    c.stream = comm;
    emit(b.collective(c, CollectiveType::all_to_all, ep_group, all_to_all_bytes(feeds_fp8_gemm)));
  };
  // The part's backward, or under a split schedule its input gradients (B) alone.
  auto compute = [&](MoeBackwardPart which) {
    const BackwardPart p = backward_part(which);
    const double share = input_only ? 1.0 - p.split.weight_share : 1.0;
    emit(b.compute(common(Category::backward, base + " " + p.name), share * p.flops,
                   static_cast<std::uint64_t>(share * p.bytes), precision_,
                   input_only ? p.split.input : p.list));
  };
  // Gradients flow back through the combine first.
  switch (phase) {
    case 0:
      if (moe_->shared_experts > 0) compute(MoeBackwardPart::shared);
      all_to_all(base + " ep combine-grad all_to_all", true);
      break;
    case 1:
      compute(MoeBackwardPart::experts);
      all_to_all(base + " ep dispatch-grad all_to_all", false);
      break;
    default:
      compute(MoeBackwardPart::router);
      break;
  }
  return last;
}

OpId ExpertParallelism::weight_gradients(engine::ScheduleBuilder& b, engine::Rank rank,
                                         engine::StreamId stream, const LayerCost& l,
                                         std::uint32_t mb,
                                         std::span<const engine::OpId> deps) const {
  OpId last = engine::kNone;
  for (const MoeBackwardPart which :
       {MoeBackwardPart::shared, MoeBackwardPart::experts, MoeBackwardPart::router}) {
    if (which == MoeBackwardPart::shared && moe_->shared_experts <= 0) continue;
    const BackwardPart p = backward_part(which);
    const std::span<const OpId> after =
        last == engine::kNone ? deps : std::span<const OpId>(&last, 1);
    last = b.compute({rank, stream, Category::backward, l.name + " bwd-w " + p.name, mb, after},
                     p.split.weight_share * p.flops,
                     static_cast<std::uint64_t>(p.split.weight_share * p.bytes), precision_,
                     p.split.weight);
  }
  return last;
}

}  // namespace clustersim::models
