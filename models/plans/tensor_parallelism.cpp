#include "models/plans/tensor_parallelism.hpp"

#include <algorithm>

#include "models/plans/layer_kernels.hpp"

namespace clustersim::models {

using engine::Category;
using engine::CollectiveType;
using engine::OpId;

TensorParallelism::TensorParallelism(const PlanContext& ctx, const LayerKernels* kernels)
    : ctx_(ctx),
      kernels_(kernels),
      recompute_groups_(full_recompute_groups(ctx)),
      moe_(ctx, kernels),
      tp_(ctx.parallel.tp),
      sequence_parallel_(ctx.parallel.sequence_parallel && ctx.parallel.tp > 1),
      scatter_gather_(ctx.parallel.pp_scatter_gather && ctx.parallel.tp > 1 &&
                      !sequence_parallel_ && ctx.transformer != nullptr),
      overlap_(sequence_parallel_ && ctx.parallel.tp_comm_overlap),
      elem_(ctx.element_bytes()),
      precision_(static_cast<std::uint8_t>(ctx.training.precision)) {
  const double hidden = ctx.transformer ? static_cast<double>(ctx.transformer->hidden_size) : 0.0;
  activation_bytes_ = static_cast<std::uint64_t>(static_cast<double>(ctx.training.micro_batch) *
                                                 ctx.seq_len() * hidden * elem_);
  // Transformer Engine quantizes the norm output before the sequence-parallel all-gather
  // (layernorm_linear's quantized all-gather), so under fp8 it moves 1 byte an element.
  gather_bytes_ = ctx.training.precision == Precision::fp8
                      ? activation_bytes_ / static_cast<std::uint64_t>(elem_)
                      : activation_bytes_;
  // With parallel.fp8_comm the forward reduce-scatter too: Transformer Engine's userbuffers with
  // fp8 buffers (fp8_buf) reduce the fp8 GEMM output, as NeMo's fp8 TP-overlap configurations do.
  scatter_bytes_ = activation_bytes_ / static_cast<std::uint64_t>(elem_) *
                   static_cast<std::uint64_t>(ctx.fp8_wire_bytes());
  if (ctx.transformer != nullptr && ctx.transformer->mla) {
    // Megatron-Core's MLASelfAttention runs the duplicated down-projections on the rank's own
    // tokens and gathers their outputs for the column-parallel up-projections: the q latent (or
    // the hidden state for a full q projection), the kv latent and the shared rope key.
    const MlaSpec& m = *ctx.transformer->mla;
    const double q_in = m.q_lora_rank > 0 ? static_cast<double>(m.q_lora_rank) : hidden;
    latent_bytes_ = static_cast<std::uint64_t>(
        static_cast<double>(ctx.training.micro_batch) * ctx.seq_len() *
        (q_in + static_cast<double>(m.kv_lora_rank + m.qk_rope_head_dim)) * elem_);
  }
  if (ctx.transformer != nullptr && ctx.cp() > 1) {
    // K and V of the whole sequence for this rank's heads (KV heads replicated when fewer than
    // tp), in 16 bits: Transformer Engine exchanges them unquantized under fp8 training.
    const TransformerSpec& t = *ctx.transformer;
    // Latent attention exchanges its heads' own keys and values: qk_head_dim + v_head_dim wide.
    const double kv_heads = std::max(1.0, static_cast<double>(t.num_kv_heads) / tp_);
    const double k_and_v = t.mla ? static_cast<double>(t.mla->qk_head_dim() + t.mla->v_head_dim)
                                 : 2 * hidden / t.num_heads;
    kv_bytes_ = static_cast<std::uint64_t>(static_cast<double>(ctx.training.micro_batch) *
                                           ctx.full_seq_len() * kv_heads * k_and_v * elem_);
    // Ulysses moves the rank's own s/cp tokens of Q, K, V (its TP heads) and of the output; the
    // scenario check asked for heads divisible by tp · cp (no MLA).
    const double tokens = static_cast<double>(ctx.training.micro_batch) * ctx.seq_len();
    const double head_dim = hidden / t.num_heads;
    const double q_heads = static_cast<double>(t.num_heads) / tp_;
    out_local_bytes_ = static_cast<std::uint64_t>(tokens * q_heads * head_dim * elem_);
    qkv_local_bytes_ =
        out_local_bytes_ + static_cast<std::uint64_t>(tokens * kv_heads * 2 * head_dim * elem_);
  }
}

namespace {
// Transformer Engine's pipelined GEMM + reduce-scatter (userbuffers' default num_splits): the
// last chunk's reduction starts only when the GEMM has finished.
constexpr std::uint64_t kReduceScatterSplits = 4;
}  // namespace

OpId TensorParallelism::beside(engine::ScheduleBuilder& b,
                               const engine::ScheduleBuilder::Common& at,
                               engine::StreamId tp_stream, CollectiveType type,
                               engine::GroupId group, std::uint64_t bytes) const {
  std::vector<OpId> after(at.deps.begin(), at.deps.end());
  if (const OpId prev = b.last_on(at.rank, at.stream); prev != engine::kNone) after.push_back(prev);
  engine::ScheduleBuilder::Common c = at;
  c.stream = tp_stream;
  c.deps = after;
  return b.collective(c, type, group, bytes);
}

OpId TensorParallelism::side_reduce_scatter(engine::ScheduleBuilder& b, engine::Rank rank,
                                            const LayerGroups& groups, const std::string& base,
                                            std::uint32_t mb, OpId after,
                                            std::uint64_t bytes) const {
  return b.collective({rank,
                       groups.tp_stream,
                       Category::tp_comm,
                       base + " tp reduce_scatter overlapped",
                       mb,
                       {&after, 1}},
                      CollectiveType::reduce_scatter, groups.tp, bytes);
}

template <typename Emit>
TensorParallelism::KvExchange TensorParallelism::with_kv_exchange(
    engine::ScheduleBuilder& b, engine::Rank rank, engine::StreamId stream,
    const LayerGroups& groups, const std::string& base, std::uint32_t mb, std::vector<OpId>& deps,
    bool backward, Emit&& emit) {
  KvExchange out;
  if (ctx_.parallel.cp_comm == ContextParallelComm::p2p) {
    // The ring passes each KV block on while the attention of the block before runs; backward
    // passes K and V again and the dK, dV accumulators beside them (twice the bytes). Modelled as
    // one ring all-gather over the CP group beside the compute: the same bytes over the same
    // neighbour links, exposed only where it outlasts the compute.
    std::vector<OpId> after = deps;
    if (const OpId prev = b.last_on(rank, stream); prev != engine::kNone) after.push_back(prev);
    out.join =
        b.collective({rank, groups.cp_stream, Category::cp_comm, base + " cp kv ring", mb, after},
                     CollectiveType::all_gather, groups.cp, backward ? 2 * kv_bytes_ : kv_bytes_,
                     engine::Algorithm::ring);
    out.compute = out.last = emit();
    return out;
  }
  if (ctx_.parallel.cp_comm == ContextParallelComm::a2a) {
    // Ulysses (DeepSpeed-Ulysses; Megatron-Core's cp_comm_type a2a): the rank's s/cp tokens of
    // every head go out and the whole sequence of heads/cp comes in, Q, K and V before the
    // attention core and its output back after it; backward the output's gradient first, then
    // those of Q, K and V. All on the compute stream, exposed; modelled around the block's one
    // compute op (the projections on either side run no faster or slower for it).
    const std::uint64_t in = backward ? out_local_bytes_ : qkv_local_bytes_;
    const std::uint64_t back = backward ? qkv_local_bytes_ : out_local_bytes_;
    b.collective({rank, stream, Category::cp_comm, base + " cp a2a in", mb, deps},
                 CollectiveType::all_to_all, groups.cp, in);
    deps.clear();
    out.compute = emit();
    out.last = b.collective({rank, stream, Category::cp_comm, base + " cp a2a out", mb},
                            CollectiveType::all_to_all, groups.cp, back);
    return out;
  }
  b.collective({rank, stream, Category::cp_comm, base + " cp kv all_gather", mb, deps},
               CollectiveType::all_gather, groups.cp, kv_bytes_);
  deps.clear();
  out.compute = out.last = emit();
  if (backward)
    out.last = b.collective({rank, stream, Category::cp_comm, base + " cp dkv reduce_scatter", mb},
                            CollectiveType::reduce_scatter, groups.cp, kv_bytes_);
  return out;
}

std::uint64_t TensorParallelism::input_gather_bytes(const LayerCost& l) const {
  return l.role == LayerRole::attention && latent_bytes_ > 0 ? latent_bytes_ : gather_bytes_;
}

std::uint64_t TensorParallelism::input_grad_bytes(const LayerCost& l) const {
  return l.role == LayerRole::attention && latent_bytes_ > 0 ? latent_bytes_ : activation_bytes_;
}

double TensorParallelism::local_count(const LayerCost& l, const ParamTensor& t) const {
  return sharded(l) ? tp_local_count(t, tp_) : t.count;
}

std::uint64_t TensorParallelism::boundary_bytes(const LayerCost& layer) const {
  if (ctx_.transformer != nullptr)
    return sequence_parallel_ || scatter_gather_
               ? activation_bytes_ / static_cast<std::uint64_t>(tp_)
               : activation_bytes_;
  return static_cast<std::uint64_t>(layer.activation_bytes * ctx_.training.micro_batch * elem_ /
                                    2.0);
}

double TensorParallelism::recompute_flops(int index) const {
  const LayerCost& layer = ctx_.layers[static_cast<std::size_t>(index)];
  switch (ctx_.training.recompute) {
    case Recompute::none:
    case Recompute::selective_op:  // re-runs memory-bound kernels only: no FLOPs
      return 0.0;
    // Megatron checkpoints the input of each group of blocks and recomputes them (all of them,
    // or under recompute_method block the first recompute_num_layers of each chunk); the
    // embedding and the logits are not recomputed.
    case Recompute::full:
      return recompute_groups_.recomputed(index) ? layer.forward_flops : 0.0;
    case Recompute::selective: {
      if (ctx_.transformer == nullptr || layer.role != LayerRole::attention) return 0.0;
      const double s = ctx_.full_seq_len();
      // QKᵀ and ·V of a whole sequence, per sample; the caller divides it over tp and cp.
      return 4.0 * s * s * static_cast<double>(ctx_.transformer->hidden_size);
    }
  }
  return 0.0;
}

OpId TensorParallelism::forward_pass(engine::ScheduleBuilder& b, engine::Rank rank,
                                     engine::StreamId stream, const LayerGroups& groups, int layer,
                                     std::uint32_t mb, std::vector<OpId>& deps, Category category,
                                     double flops, const char* suffix, std::uint32_t kernels) {
  const LayerCost& l = ctx_.layers[static_cast<std::size_t>(layer)];
  const LayerRole role = l.role;
  const bool split = tp_ > 1 && sharded(l);
  const std::string base = l.name + " " + suffix;
  auto common = [&](Category cat, const std::string& name) {
    engine::ScheduleBuilder::Common c{rank, stream, cat, name, mb, deps};
    return c;
  };
  OpId last = engine::kNone;
  auto emitted = [&](OpId id) {
    last = id;
    deps.clear();
  };
  // With parallel.tp_comm_overlap the all-gather runs beside the layer's compute (userbuffers'
  // ring exchange hands each chunk to the GEMM as it arrives) and the reduce-scatter mostly does
  // too (pipelined with the output GEMM's chunks), all but its last chunk.
  const bool overlap = split && overlapped(l);
  OpId side = engine::kNone;  // the last TP collective beside the compute
  if (split && sequence_parallel_ && role != LayerRole::embedding) {
    if (overlap)
      side = beside(b, common(Category::tp_comm, base + " tp all_gather"), groups.tp_stream,
                    CollectiveType::all_gather, groups.tp, input_gather_bytes(l));
    else
      emitted(b.collective(common(Category::tp_comm, base + " tp all_gather"),
                           CollectiveType::all_gather, groups.tp, input_gather_bytes(l)));
  }
  if (role == LayerRole::moe) {
    emitted(moe_.forward(b, rank, stream, groups.ep, l, mb, deps, category));
  } else {
    // A sample's FLOPs and activations are split over tp (sharded layers) and cp (every
    // transformer layer holds 1/cp of each sequence); the weights only over tp.
    const double per_rank = (split ? flops / tp_ : flops) / ctx_.cp();
    const double bytes =
        (l.params * elem_ + l.memory_bytes * ctx_.training.micro_batch * elem_ / 2.0 / ctx_.cp()) /
        (split ? tp_ : 1);
    auto compute = [&] {
      return b.compute(common(category, base), per_rank * ctx_.training.micro_batch,
                       static_cast<std::uint64_t>(bytes), precision_, kernels);
    };
    if (role == LayerRole::attention && ctx_.cp() > 1) {
      const KvExchange x =
          with_kv_exchange(b, rank, stream, groups, base, mb, deps, false, compute);
      emitted(x.last);
      if (x.join != engine::kNone) deps.push_back(x.join);
    } else {
      emitted(compute());
    }
  }
  if (!split) return last;
  switch (role) {
    case LayerRole::attention:
    case LayerRole::mlp:
    case LayerRole::moe:
    case LayerRole::embedding:
      if (overlap) {
        const std::uint64_t tail = scatter_bytes_ / kReduceScatterSplits;
        side = side_reduce_scatter(b, rank, groups, base, mb, side, scatter_bytes_ - tail);
        deps.push_back(side);
        emitted(b.collective(common(Category::tp_comm, base + " tp reduce_scatter"),
                             CollectiveType::reduce_scatter, groups.tp, tail));
        break;
      }
      emitted(reduce_across_tp(b, common(Category::tp_comm, base), base, groups.tp, scatter_bytes_,
                               activation_bytes_));
      break;
    case LayerRole::head:
      // Vocabulary-parallel cross-entropy: the logits' max and sum of exponentials, fp32.
      emitted(b.collective(
          common(Category::tp_comm, base + " tp all_reduce"), CollectiveType::all_reduce, groups.tp,
          static_cast<std::uint64_t>(2 * 4 * ctx_.training.micro_batch * ctx_.seq_len())));
      break;
    case LayerRole::generic:
      break;
  }
  return last;
}

OpId TensorParallelism::forward(engine::ScheduleBuilder& b, engine::Rank rank,
                                engine::StreamId stream, const LayerGroups& groups, int layer,
                                std::uint32_t mb, std::vector<OpId>& deps) {
  const LayerCost& l = ctx_.layers[static_cast<std::size_t>(layer)];
  return forward_pass(b, rank, stream, groups, layer, mb, deps, Category::forward, l.forward_flops,
                      "fwd", kernels_ != nullptr ? kernels_->forward(layer) : engine::kNone);
}

OpId TensorParallelism::backward(engine::ScheduleBuilder& b, engine::Rank rank,
                                 engine::StreamId stream, const LayerGroups& groups, int layer,
                                 std::uint32_t mb, std::vector<OpId>& deps, OpId* weight_grads,
                                 bool input_only) {
  const LayerCost& l = ctx_.layers[static_cast<std::size_t>(layer)];
  const bool split = tp_ > 1 && sharded(l);
  emit_recompute(b, rank, stream, groups, layer, mb, deps);
  const std::string base = l.name + " bwd";
  OpId last = engine::kNone;
  auto common = [&](Category cat, const std::string& name) {
    return engine::ScheduleBuilder::Common{rank, stream, cat, name, mb, deps};
  };
  // With sequence parallelism every sharded layer starts its backward with an all-gather: the
  // conjugate of the reduce-scatter (ḡ) that ended its forward, gathering the output gradient.
  // With parallel.tp_comm_overlap both run beside the backward's GEMMs: the all-gather in a ring
  // exchange with the data-gradient GEMM, the reduce-scatter in bulk beside the weight-gradient
  // GEMM; the next layer's backward waits for the reduce-scatter.
  const bool overlap = split && overlapped(l);
  OpId side = engine::kNone;
  if (split && sequence_parallel_) {
    if (overlap) {
      side = beside(b, common(Category::tp_comm, base + " tp all_gather"), groups.tp_stream,
                    CollectiveType::all_gather, groups.tp, gather_bytes_);
    } else {
      last = b.collective(common(Category::tp_comm, base + " tp all_gather"),
                          CollectiveType::all_gather, groups.tp, gather_bytes_);
      deps.clear();
      // The column-parallel linear's input, gathered again for its weight gradient (the forward
      // kept this rank's share): beside the data gradient when the reduction is asynchronous
      // (below), here blocking like the reduction itself.
      if (!input_only && !ctx_.parallel.tp_async_grad_reduce_on() &&
          (l.role == LayerRole::attention || l.role == LayerRole::mlp))
        last = b.collective(common(Category::tp_comm, base + " tp all_gather wgrad input"),
                            CollectiveType::all_gather, groups.tp, input_gather_bytes(l));
    }
  }
  OpId join = engine::kNone;
  // parallel.tp_async_grad_reduce: the input gradient's reduction runs beside the weight gradient.
  const LayerKernels::AsyncSplit cut =
      split && !overlap && !input_only && l.role != LayerRole::moe &&
              l.role != LayerRole::embedding && ctx_.cp() == 1 && kernels_ != nullptr
          ? kernels_->async_split(layer)
          : LayerKernels::AsyncSplit{};
  if (cut.before != engine::kNone) {
    const double flops = l.backward_flops / tp_ * ctx_.training.micro_batch;
    const double bytes = backward_bytes(l, split);
    auto part = [&](const std::string& name, double flop_share, double byte_share,
                    std::uint32_t list) {
      return b.compute(common(Category::backward, name), flop_share * flops,
                       static_cast<std::uint64_t>(byte_share * bytes), precision_, list);
    };
    // Megatron's LinearWithGradAccumulationAndAsyncCommunication: the data gradient, then the
    // reduction launched on the TP communicator's stream while the weight-gradient GEMM runs (and,
    // here, the norm's short backward after it: layer_kernels.hpp); the layer below waits for both.
    // Under sequence parallelism the forward kept only this rank's share of the linear's input,
    // so the backward first launches its all-gather beside the data-gradient GEMM, waits for it,
    // then launches the reduce-scatter; the weight gradient needs the gathered input.
    OpId dgrad = engine::kNone, regathered = engine::kNone;
    if (sequence_parallel_ && cut.dgrad != engine::kNone) {
      if (cut.lead != engine::kNone) {
        deps.assign(1, part(base, cut.lead_flops, cut.lead_bytes, cut.lead));
      }
      // Beside the compute stream: after its last op (the lead, or what preceded the layer).
      regathered =
          beside(b, common(Category::tp_comm, base + " tp all_gather wgrad input"),
                 groups.tp_stream, CollectiveType::all_gather, groups.tp, input_gather_bytes(l));
      dgrad = part(base + " dgrad", cut.before_flops - cut.lead_flops,
                   cut.before_bytes - cut.lead_bytes, cut.dgrad);
      deps.assign({dgrad, regathered});
    } else {
      dgrad = part(base, cut.before_flops, cut.before_bytes, cut.before);
      deps.assign(1, dgrad);
    }
    const OpId reduced =
        reduce_across_tp(b, {rank, groups.tp_stream, Category::tp_comm, base, mb, deps}, base,
                         groups.tp, input_grad_bytes(l), input_grad_bytes(l));
    *weight_grads =
        part(base + " wgrad", 1.0 - cut.before_flops, 1.0 - cut.before_bytes, cut.beside);
    deps.assign(1, reduced);
    return reduced;
  }
  if (l.role == LayerRole::moe) {
    last = moe_.backward(b, rank, stream, groups.ep, l, mb, deps, weight_grads, input_only);
  } else {
    const double bytes = backward_bytes(l, split);
    // B of a zero-bubble schedule: the backward less its weight gradients (W's share).
    const LayerKernels::SplitBackward parts = input_only && kernels_ != nullptr
                                                  ? kernels_->split_backward(layer)
                                                  : LayerKernels::SplitBackward{};
    const double share = input_only ? 1.0 - parts.weight_share : 1.0;
    const std::uint32_t list = kernels_ == nullptr ? engine::kNone
                               : input_only        ? parts.input
                                                   : kernels_->backward(layer);
    auto compute = [&] {
      return b.compute(common(Category::backward, base),
                       share * (split ? l.backward_flops / tp_ : l.backward_flops) / ctx_.cp() *
                           ctx_.training.micro_batch,
                       static_cast<std::uint64_t>(share * bytes), precision_, list);
    };
    if (l.role == LayerRole::attention && ctx_.cp() > 1) {
      const KvExchange x = with_kv_exchange(b, rank, stream, groups, base, mb, deps, true, compute);
      *weight_grads = input_only ? engine::kNone : x.compute;
      last = x.last;
      join = x.join;
    } else {
      last = compute();
      *weight_grads = input_only ? engine::kNone : last;
    }
  }
  deps.clear();
  if (join != engine::kNone) deps.push_back(join);
  if (overlap) {
    // Transformer Engine's bulk overlaps (ub_bulk_dgrad, ub_bulk_wgrad): the column-parallel
    // input gathered again beside the data gradient, then the reduce-scatter beside the weight
    // gradient, in that order on the side stream (a split backward's B has no weight gradient).
    OpId after = side;
    if (!input_only)
      after = b.collective({rank,
                            groups.tp_stream,
                            Category::tp_comm,
                            base + " tp all_gather wgrad input",
                            mb,
                            {&side, 1}},
                           CollectiveType::all_gather, groups.tp, input_gather_bytes(l));
    last = side_reduce_scatter(b, rank, groups, base, mb, after, input_grad_bytes(l));
    deps.push_back(last);
  } else if (split && l.role != LayerRole::embedding) {
    last = reduce_across_tp(b, common(Category::tp_comm, base), base, groups.tp,
                            input_grad_bytes(l), input_grad_bytes(l));
  }
  return last;
}

void TensorParallelism::emit_recompute(engine::ScheduleBuilder& b, engine::Rank rank,
                                       engine::StreamId stream, const LayerGroups& groups,
                                       int layer, std::uint32_t mb, std::vector<OpId>& deps) {
  const LayerCost& l = ctx_.layers[static_cast<std::size_t>(layer)];
  const bool split = tp_ > 1 && sharded(l);
  const double extra = recompute_flops(layer);
  const std::uint32_t recompute = kernels_ != nullptr ? kernels_->recompute(layer) : engine::kNone;
  // selective_op re-runs the layer's elementwise kernels (no FLOPs; its kernel list has them).
  const bool elementwise =
      ctx_.training.recompute == Recompute::selective_op && recompute != engine::kNone;
  if (extra > 0 || elementwise) {
    if (ctx_.training.recompute == Recompute::full) {
      // Full recompute re-runs the layer's forward, collectives included.
      forward_pass(b, rank, stream, groups, layer, mb, deps, Category::recompute, extra,
                   "recompute", recompute);
    } else {
      const double per_rank = (split ? extra / tp_ : extra) / ctx_.cp();
      b.compute({rank, stream, Category::recompute, l.name + " recompute", mb, deps},
                per_rank * ctx_.training.micro_batch, 0, precision_, recompute);
      deps.clear();
    }
  }
}

OpId TensorParallelism::moe_forward_phase(engine::ScheduleBuilder& b, engine::Rank rank,
                                          engine::StreamId stream, engine::StreamId comm,
                                          const LayerGroups& groups, int layer, std::uint32_t mb,
                                          std::vector<OpId>& deps, int phase) {
  const LayerCost& l = ctx_.layers[static_cast<std::size_t>(layer)];
  const bool split = tp_ > 1 && sharded(l);
  const std::string base = l.name + " fwd";
  OpId last = engine::kNone;
  // As forward_pass runs an MoE block (no TP overlap: it leaves the expert GEMMs alone).
  if (phase == 0 && split && sequence_parallel_) {
    last = b.collective({rank, stream, Category::tp_comm, base + " tp all_gather", mb, deps},
                        CollectiveType::all_gather, groups.tp, input_gather_bytes(l));
    deps.clear();
  }
  if (const OpId op = moe_.forward_phase(b, rank, stream, comm, groups.ep, l, mb, deps,
                                         Category::forward, phase);
      op != engine::kNone)
    last = op;
  if (phase < 2) return last;
  deps.clear();
  if (split)
    last = reduce_across_tp(b, {rank, stream, Category::tp_comm, base, mb, deps}, base, groups.tp,
                            scatter_bytes_, activation_bytes_);
  return last;
}

OpId TensorParallelism::moe_backward_phase(engine::ScheduleBuilder& b, engine::Rank rank,
                                           engine::StreamId stream, engine::StreamId comm,
                                           const LayerGroups& groups, int layer, std::uint32_t mb,
                                           std::vector<OpId>& deps, int phase, bool input_only) {
  const LayerCost& l = ctx_.layers[static_cast<std::size_t>(layer)];
  const bool split = tp_ > 1 && sharded(l);
  const std::string base = l.name + " bwd";
  OpId last = engine::kNone;
  if (phase == 0) {
    // As backward() runs an MoE block: its recompute (all-to-alls included, on `stream`), the
    // sequence-parallel re-gather.
    emit_recompute(b, rank, stream, groups, layer, mb, deps);
    if (split && sequence_parallel_) {
      last = b.collective({rank, stream, Category::tp_comm, base + " tp all_gather", mb, deps},
                          CollectiveType::all_gather, groups.tp, gather_bytes_);
      deps.clear();
    }
  }
  if (const OpId op =
          moe_.backward_phase(b, rank, stream, comm, groups.ep, l, mb, deps, phase, input_only);
      op != engine::kNone)
    last = op;
  if (phase < 2) return last;
  deps.clear();
  if (split)
    last = reduce_across_tp(b, {rank, stream, Category::tp_comm, base, mb, deps}, base, groups.tp,
                            input_grad_bytes(l), input_grad_bytes(l));
  return last;
}

OpId TensorParallelism::reduce_across_tp(engine::ScheduleBuilder& b,
                                         engine::ScheduleBuilder::Common at,
                                         const std::string& base, engine::GroupId tp,
                                         std::uint64_t scattered, std::uint64_t reduced) const {
  const std::string name = base + (sequence_parallel_ ? " tp reduce_scatter" : " tp all_reduce");
  at.category = Category::tp_comm;
  at.name = name;
  return b.collective(
      at, sequence_parallel_ ? CollectiveType::reduce_scatter : CollectiveType::all_reduce, tp,
      sequence_parallel_ ? scattered : reduced);
}

// Bytes a layer's backward moves (the roofline's memory term where the layer has no kernels):
// its parameters and its activations, read and written, this rank's share.
double TensorParallelism::backward_bytes(const LayerCost& l, bool split) const {
  return 2.0 *
         (l.params * elem_ + l.memory_bytes * ctx_.training.micro_batch * elem_ / 2.0 / ctx_.cp()) /
         (split ? tp_ : 1);
}

OpId TensorParallelism::weight_gradients(engine::ScheduleBuilder& b, engine::Rank rank,
                                         engine::StreamId stream, int layer, std::uint32_t mb,
                                         std::span<const OpId> deps) {
  const LayerCost& l = ctx_.layers[static_cast<std::size_t>(layer)];
  if (l.role == LayerRole::moe) return moe_.weight_gradients(b, rank, stream, l, mb, deps);
  const bool split = tp_ > 1 && sharded(l);
  const LayerKernels::SplitBackward parts =
      kernels_ != nullptr ? kernels_->split_backward(layer) : LayerKernels::SplitBackward{};
  const double bytes = backward_bytes(l, split);
  return b.compute({rank, stream, Category::backward, l.name + " bwd-w", mb, deps},
                   parts.weight_share * (split ? l.backward_flops / tp_ : l.backward_flops) /
                       ctx_.cp() * ctx_.training.micro_batch,
                   static_cast<std::uint64_t>(parts.weight_share * bytes), precision_,
                   kernels_ != nullptr ? parts.weight : engine::kNone);
}

}  // namespace clustersim::models
