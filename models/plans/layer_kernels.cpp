#include "models/plans/layer_kernels.hpp"

#include <algorithm>
#include <map>
#include <string>

#include "models/kernels/resnet50_kernels.hpp"
#include "models/plans/data_parallel.hpp"
#include "models/plans/pipeline_order.hpp"
#include "models/plans/recompute_layers.hpp"

namespace clustersim::models {

using kernels::Pass;

LayerKernels::LayerKernels(const PlanContext& ctx, engine::KernelTable& table, double routed_copies)
    : ctx_(ctx), table_(table) {
  if (ctx.transformer != nullptr)
    build_transformer(routed_copies);
  else if (is_resnet50(ctx.layers))
    build_resnet50();
  if (splits_backward(ctx.parallel.schedule)) build_split_backward();
  if (ctx.parallel.tp > 1 && ctx.parallel.tp_async_grad_reduce_on() &&
      !ctx.parallel.tp_comm_overlap)
    build_async_split();
}

void LayerKernels::build_async_split() {
  async_.assign(ctx_.layers.size(), AsyncSplit{});
  std::map<std::uint32_t, AsyncSplit> by_list;  // layers of one shape share their lists
  for (std::size_t i = 0; i < backward_.size(); ++i) {
    if (backward_[i] == engine::kNone) continue;
    auto [it, fresh] = by_list.try_emplace(backward_[i]);
    if (fresh) {
      const auto list = table_.list(backward_[i]);
      const auto is = [&](std::size_t k, const char* tail) {
        return table_.name_of(list[k].name).ends_with(tail);
      };
      std::size_t dgrad = list.size();
      for (std::size_t k = 0; k < list.size(); ++k)
        if (is(k, ".dgrad")) dgrad = k;
      if (dgrad + 1 < list.size() && is(dgrad + 1, ".wgrad")) {
        const auto at = [&](std::size_t k) {
          return list.begin() + static_cast<std::ptrdiff_t>(k);
        };
        const std::vector<engine::Kernel> before(list.begin(), at(dgrad + 1)),
            beside(at(dgrad + 1), list.end()), lead(list.begin(), at(dgrad)),
            gemm(at(dgrad), at(dgrad + 1));
        double flops = 0, bytes = 0, bf = 0, bb = 0, lf = 0, lb = 0;
        for (std::size_t k = 0; k < list.size(); ++k) {
          flops += list[k].flops;
          bytes += list[k].bytes;
          if (k <= dgrad) bf += list[k].flops, bb += list[k].bytes;
          if (k < dgrad) lf += list[k].flops, lb += list[k].bytes;
        }
        const auto share = [](double part, double all) { return all > 0 ? part / all : 0; };
        it->second = {table_.intern(before),
                      table_.intern(beside),
                      share(bf, flops),
                      share(bb, bytes),
                      lead.empty() ? engine::kNone : table_.intern(lead),
                      table_.intern(gemm),
                      share(lf, flops),
                      share(lb, bytes)};
      }
    }
    async_[i] = it->second;
  }
}

void LayerKernels::build_split_backward() {
  split_.assign(ctx_.layers.size(), SplitBackward{});
  std::map<std::uint32_t, SplitBackward> by_list;  // layers of one shape share their lists
  auto split_of = [&](std::uint32_t list) {
    auto [it, fresh] = by_list.try_emplace(list);
    if (fresh) {
      std::vector<engine::Kernel> input, weight;
      double weight_flops = 0, all_flops = 0;
      for (const engine::Kernel& k : table_.list(list)) {
        const bool w = table_.name_of(k.name).find(".wgrad") != std::string::npos;
        (w ? weight : input).push_back(k);
        all_flops += k.flops;
        if (w) weight_flops += k.flops;
      }
      it->second = {table_.intern(input), table_.intern(weight),
                    all_flops > 0 ? weight_flops / all_flops : 0.5};
    }
    return it->second;
  };
  for (std::size_t i = 0; i < backward_.size(); ++i)
    if (backward_[i] != engine::kNone) split_[i] = split_of(backward_[i]);
  // The MoE parts' lists (dualpipe: B and W of an MoE block).
  if (moe_backward_.router != engine::kNone) moe_split_.router = split_of(moe_backward_.router);
  if (moe_backward_.experts != engine::kNone) moe_split_.experts = split_of(moe_backward_.experts);
  if (moe_backward_.shared != engine::kNone) moe_split_.shared = split_of(moe_backward_.shared);
}

kernels::TransformerKernelConfig transformer_kernel_config(const PlanContext& ctx,
                                                           double routed_copies) {
  const TransformerSpec& t = *ctx.transformer;
  const TrainingConfig& training = ctx.training;
  kernels::TransformerKernelConfig config =
      kernels::kernel_config(t, training.micro_batch, ctx.seq_len(), ctx.parallel.tp);
  config.sequence_parallel = ctx.parallel.sequence_parallel && ctx.parallel.tp > 1;
  if (ctx.cp() > 1) config.kv_seq = ctx.full_seq_len();
  config.attention = training.attention == Attention::flash    ? kernels::AttentionImpl::flash
                     : training.attention == Attention::flash1 ? kernels::AttentionImpl::flash1
                                                               : kernels::AttentionImpl::standard;
  config.fused_kernels = training.fused_kernels;
  config.eager_families = training.eager_families;
  config.gradient_accumulation_fusion = training.gradient_accumulation_fusion;
  config.main_grad_bytes = ctx.gradient_bytes();
  // DeepSpeed's engine with bf16 runs BF16_Optimizer, which accumulates each micro-batch's bf16
  // gradients into fp32 ones through a cast copy (transformer_kernels.hpp cast_main_grad).
  config.cast_main_grad = ctx.parallel.pipeline_engine == PipelineEngine::deepspeed &&
                          training.precision == Precision::bf16 &&
                          !training.gradient_accumulation_fusion &&
                          ctx.gradient_bytes() > bytes_per_element(Precision::bf16);
  config.loss_chunks = training.loss_chunks;
  config.causal = t.causal;
  config.dtype = training.precision;
  config.autocast = training.amp;
  if (t.moe) {
    // The pace-setting rank's experts: E/ep of them, sharing its routed token copies.
    config.local_experts = std::max(1, t.moe->num_experts / std::max(1, ctx.parallel.ep));
    config.tokens_per_expert = routed_copies / config.local_experts;
  }
  return config;
}

void LayerKernels::build_transformer(double routed_copies) {
  const TransformerSpec& t = *ctx_.transformer;
  const TrainingConfig& training = ctx_.training;
  config_ = transformer_kernel_config(ctx_, routed_copies);
  kernels::TransformerKernelConfig dense = config_;
  dense.num_experts = 0;  // a dense block of an MoE model (first_dense, every > 1)

  // One list per role and pass, whatever the number of layers.
  struct Lists {
    std::uint32_t forward = engine::kNone, backward = engine::kNone;
  };
  auto both = [&](auto&& make) {
    return Lists{table_.intern(make(Pass::forward)), table_.intern(make(Pass::backward))};
  };
  std::map<LayerRole, Lists> by_role;
  auto lists = [&](LayerRole role) -> const Lists& {
    auto it = by_role.find(role);
    if (it != by_role.end()) return it->second;
    Lists l;
    switch (role) {
      case LayerRole::embedding:
        l = both([&](Pass p) { return kernels::embedding_kernels(config_, p, table_); });
        break;
      case LayerRole::attention:
        l = both([&](Pass p) { return kernels::attention_block_kernels(config_, p, table_); });
        break;
      case LayerRole::mlp:
        l = both([&](Pass p) { return kernels::mlp_block_kernels(dense, p, table_); });
        break;
      case LayerRole::head:
        l = both([&](Pass p) { return kernels::lm_head_kernels(config_, p, table_); });
        break;
      case LayerRole::moe:  // the MoE ops take their lists from moe()
      case LayerRole::generic:
        break;
    }
    return by_role.emplace(role, l).first->second;
  };

  const std::size_t n = ctx_.layers.size();
  forward_.assign(n, engine::kNone);
  backward_.assign(n, engine::kNone);
  recompute_.assign(n, engine::kNone);
  std::uint32_t core = engine::kNone;  // the attention core forward (selective recompute)
  const RecomputeGroups full = full_recompute_groups(ctx_);
  std::map<LayerRole, std::uint32_t> elementwise;  // memory-bound kernels (selective_op)
  for (const LayerRole r : {LayerRole::attention, LayerRole::mlp})
    elementwise[r] = engine::kNone;
  for (std::size_t i = 0; i < n; ++i) {
    const LayerCost& l = ctx_.layers[i];
    const Lists& ls = lists(l.role);
    forward_[i] = ls.forward;
    backward_[i] = ls.backward;
    switch (training.recompute) {
      case Recompute::none:
        break;
      case Recompute::full:  // the blocks a checkpoint group holds (recompute_layers.hpp)
        if (full.recomputed(static_cast<int>(i))) recompute_[i] = ls.forward;
        break;
      case Recompute::selective_op:
        // torchtitan's op-level policy keeps GEMM and attention outputs: the backward re-runs
        // the layer's memory-bound kernels (norms, activation, rotary, dropout) from them.
        if (l.role == LayerRole::attention || l.role == LayerRole::mlp) {
          auto& list = elementwise[l.role];
          if (list == engine::kNone) {
            std::vector<engine::Kernel> kept;
            for (const auto& k : table_.list(ls.forward))
              if (k.kind == engine::KernelKind::memory) kept.push_back(k);
            list = table_.intern(kept);
          }
          recompute_[i] = list;
        }
        break;
      case Recompute::selective:
        if (l.role == LayerRole::attention) {
          if (core == engine::kNone)
            core = table_.intern(kernels::attention_core_kernels(config_, Pass::forward, table_));
          recompute_[i] = core;
        }
        break;
    }
  }
  if (t.moe) {
    for (const Pass p : {Pass::forward, Pass::backward}) {
      MoeLists& m = p == Pass::forward ? moe_forward_ : moe_backward_;
      m.router = table_.intern(kernels::moe_kernels(config_, p, kernels::MoePart::router, table_));
      m.experts =
          table_.intern(kernels::moe_kernels(config_, p, kernels::MoePart::experts, table_));
      if (t.moe->shared_experts > 0)
        m.shared =
            table_.intern(kernels::moe_kernels(config_, p, kernels::MoePart::shared, table_));
    }
  }
}

void LayerKernels::build_resnet50() {
  // PyTorch eager's batch norm and ReLU are separate kernels (training.fused_kernels is
  // Megatron's transformer fusions; docs/fidelity.md).
  const auto layers =
      kernels::resnet50_kernels(ctx_.training.micro_batch, table_, ctx_.training.precision, false);
  const std::size_t n = ctx_.layers.size();
  forward_.assign(n, engine::kNone);
  backward_.assign(n, engine::kNone);
  recompute_.assign(n, engine::kNone);
  const RecomputeGroups full = full_recompute_groups(ctx_);
  for (std::size_t i = 0; i < n && i < layers.size(); ++i) {
    forward_[i] = table_.intern(layers[i].forward);
    backward_[i] = table_.intern(layers[i].backward);
    if (full.recomputed(static_cast<int>(i))) recompute_[i] = forward_[i];
  }
}

bool LayerKernels::is_resnet50(const std::vector<LayerCost>& layers) {
  static const std::vector<LayerCost> preset = [] {
    const ModelSpec* m = find_model("resnet50");
    return m != nullptr ? expand_model(*m, 1) : std::vector<LayerCost>{};
  }();
  if (preset.empty() || layers.size() != preset.size()) return false;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const LayerCost& a = layers[i];
    const LayerCost& b = preset[i];
    if (a.role != LayerRole::generic || a.name != b.name || a.params != b.params ||
        a.forward_flops != b.forward_flops || a.backward_flops != b.backward_flops)
      return false;
  }
  return true;
}

std::uint32_t LayerKernels::optimizer(double params, std::uint64_t tensors) {
  const auto key = std::pair{params, tensors};
  if (auto it = optimizer_.find(key); it != optimizer_.end()) return it->second;
  kernels::OptimizerKernelConfig c;
  c.params = params;
  c.tensors = std::max<std::uint64_t>(1, tensors);
  c.optimizer = ctx_.training.optimizer == Optimizer::sgd ? kernels::OptimizerKind::sgd
                                                          : kernels::OptimizerKind::adam;
  c.fused = ctx_.training.optimizer_impl == OptimizerImpl::fused;
  c.master_weights = keeps_master_weights(ctx_.training);
  c.momentum = ctx_.training.momentum > 0;
  const bool decay = ctx_.training.weight_decay > 0;
  c.l2_decay = decay && ctx_.training.optimizer != Optimizer::adamw;
  c.decoupled_decay = decay && ctx_.training.optimizer == Optimizer::adamw;
  const std::uint32_t index = table_.intern(kernels::optimizer_kernels(c, table_));
  optimizer_.emplace(key, index);
  return index;
}

}  // namespace clustersim::models
