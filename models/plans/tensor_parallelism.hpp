// One layer's forward and backward ops on one rank under Megatron tensor parallelism
// (DESIGN.md "TP"): attention (QKV column-parallel, output row-parallel) and MLP (fc1 column,
// fc2 row) each end with an all-reduce of the b·s·h activation over the TP group in forward, and
// their input gradients are all-reduced in backward; with sequence parallelism each all-reduce
// becomes an all-gather before the layer and a reduce-scatter after it. The embedding is
// vocabulary-parallel (an all-reduce after its lookup) and so is the LM head (the cross-entropy's
// max and sum are all-reduced in forward, the input gradient in backward). These collectives run
// on the compute stream: they are on the critical path. The MLP of an MoE block runs its router,
// token all-to-alls and experts in between (expert_parallelism.hpp).
//
// It also says what FLOPs recompute re-spends; the activations a layer keeps on this rank are the
// memory model's (activation_memory.hpp, from the kernels' saved tensors).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/schedule.hpp"
#include "models/plans/expert_parallelism.hpp"
#include "models/plans/plan_context.hpp"
#include "models/plans/recompute_layers.hpp"

namespace clustersim::models {

// The process groups one rank's layers communicate over (kNone where the axis has one rank).
struct LayerGroups {
  engine::GroupId tp = engine::kNone;
  engine::GroupId ep = engine::kNone;
  engine::GroupId cp = engine::kNone;
  engine::StreamId cp_stream = 0;  // where p2p context parallelism exchanges K and V
  // Where TP collectives run beside compute: parallel.tp_comm_overlap's, and the asynchronous
  // input-gradient reductions of parallel.tp_async_grad_reduce.
  engine::StreamId tp_stream = 0;
};

class LayerKernels;

class TensorParallelism {
 public:
  // `kernels` (optional; it must outlive this): the kernel lists its compute ops name
  // (layer_kernels.hpp); without it the ops carry FLOPs and bytes only (memory model, tests).
  explicit TensorParallelism(const PlanContext& context, const LayerKernels* kernels = nullptr);

  // Emits layer `layer`'s forward for micro-batch `mb`; `deps` gate its first op and are then
  // cleared. Returns the last op.
  engine::OpId forward(engine::ScheduleBuilder& b, engine::Rank rank, engine::StreamId stream,
                       const LayerGroups& groups, int layer, std::uint32_t mb,
                       std::vector<engine::OpId>& deps);
  // Emits recompute (if any) and backward; `*weight_grads` receives the op that produces the
  // layer's weight gradients. With `input_only` (a zero-bubble schedule's B pass) the backward
  // computes the input gradients alone and weight_gradients() emits the rest later.
  engine::OpId backward(engine::ScheduleBuilder& b, engine::Rank rank, engine::StreamId stream,
                        const LayerGroups& groups, int layer, std::uint32_t mb,
                        std::vector<engine::OpId>& deps, engine::OpId* weight_grads,
                        bool input_only = false);
  // A zero-bubble schedule's W pass of `layer` for micro-batch `mb`: its weight-gradient GEMMs,
  // after `deps` (its B pass). Returns the op.
  engine::OpId weight_gradients(engine::ScheduleBuilder& b, engine::Rank rank,
                                engine::StreamId stream, int layer, std::uint32_t mb,
                                std::span<const engine::OpId> deps);

  // An MoE block (role moe) of `layer` cut into ExpertParallelism's three phases with its
  // all-to-alls on `comm`, for dualpipe's F&B pairs (docs/dualpipe.md): phase 0
  // starts with what forward() (backward(): the recompute too) runs before the experts, phase 2
  // ends with the TP reduction. Each returns its last op (kNone: none); `deps` gate the phase and
  // then hold what the next one waits for. `input_only`: as backward()'s.
  engine::OpId moe_forward_phase(engine::ScheduleBuilder& b, engine::Rank rank,
                                 engine::StreamId stream, engine::StreamId comm,
                                 const LayerGroups& groups, int layer, std::uint32_t mb,
                                 std::vector<engine::OpId>& deps, int phase);
  engine::OpId moe_backward_phase(engine::ScheduleBuilder& b, engine::Rank rank,
                                  engine::StreamId stream, engine::StreamId comm,
                                  const LayerGroups& groups, int layer, std::uint32_t mb,
                                  std::vector<engine::OpId>& deps, int phase,
                                  bool input_only = false);

  // Bytes of the activation (or its gradient) crossing a pipeline boundary after `layer`: b·s·h
  // at the training precision for transformers (a 1/t shard with sequence parallelism), the
  // layer's stored activation for layer lists.
  std::uint64_t boundary_bytes(const LayerCost& layer) const;
  // parallel.pp_scatter_gather applies (a transformer, tp > 1, no sequence parallelism): the
  // receiving stage all-gathers boundary_gathered_bytes() over TP after each receive.
  bool gathers_boundary() const { return scatter_gather_; }
  std::uint64_t boundary_gathered_bytes() const { return activation_bytes_; }
  // The userbuffers parallel.tp_comm_overlap keeps on each rank for the whole run: one b·s·h
  // 16-bit buffer per overlapped GEMM of a transformer layer, as Transformer Engine's
  // initialize_ub allocates them (10: the QKV and FC1 forward all-gathers, the projection and
  // FC2 forward reduce-scatters, the projection and FC2 data-gradient all-gathers, and the QKV
  // and FC1 data- and weight-gradient bulk exchanges). 0 without overlap.
  std::uint64_t userbuffer_bytes() const { return overlap_ ? 10 * activation_bytes_ : 0; }
  // This rank's elements of `tensor` of `layer`: all of a replicated tensor or of a layer
  // tensor parallelism does not split, else 1/tp.
  double local_count(const LayerCost& layer, const ParamTensor& tensor) const;

  // FLOPs the backward re-spends on recomputing layer `layer` (per sample): the whole forward
  // with full recompute where a checkpoint group holds it (recompute_layers.hpp; never the
  // embedding or the logits), the attention core (4·s²·h) with selective recompute, nothing
  // otherwise.
  double recompute_flops(int layer) const;

 private:
  // Whether the layer is split over the TP group (every transformer layer is).
  bool sharded(const LayerCost& layer) const { return layer.role != LayerRole::generic; }
  // The collectives around a layer's compute, shared by forward and recompute.
  engine::OpId forward_pass(engine::ScheduleBuilder& b, engine::Rank rank, engine::StreamId stream,
                            const LayerGroups& groups, int layer, std::uint32_t mb,
                            std::vector<engine::OpId>& deps, engine::Category category,
                            double flops, const char* suffix, std::uint32_t kernels);

  // Context parallelism's K/V exchange around an attention block's compute (emitted by `emit`,
  // which returns the compute op): p2p runs it beside the compute and the next op waits for
  // both; all_gather gathers K and V before it (and reduce-scatters their gradients after a
  // backward), exposed.
  struct KvExchange {
    engine::OpId compute = engine::kNone;  // the attention block's compute
    engine::OpId last = engine::kNone;     // the last op on the compute stream
    engine::OpId join = engine::kNone;     // what the next op must also wait for (p2p)
  };
  template <typename Emit>
  KvExchange with_kv_exchange(engine::ScheduleBuilder& b, engine::Rank rank,
                              engine::StreamId stream, const LayerGroups& groups,
                              const std::string& base, std::uint32_t mb,
                              std::vector<engine::OpId>& deps, bool backward, Emit&& emit);

  // The recompute backward() runs before a layer's backward (training.recompute), if any.
  void emit_recompute(engine::ScheduleBuilder& b, engine::Rank rank, engine::StreamId stream,
                      const LayerGroups& groups, int layer, std::uint32_t mb,
                      std::vector<engine::OpId>& deps);
  double backward_bytes(const LayerCost& layer, bool split) const;
  // Whether parallel.tp_comm_overlap runs this layer's sequence-parallel collectives beside its
  // GEMMs: Transformer Engine's userbuffers overlap the linear layers of attention and MLP
  // blocks, not the expert GEMMs, the embedding or the logits.
  bool overlapped(const LayerCost& layer) const {
    return overlap_ && (layer.role == LayerRole::attention || layer.role == LayerRole::mlp);
  }
  // A TP collective beside the compute of the op that `deps` gate: on groups.tp_stream, after
  // `deps` and the last op of `stream` (what the compute's input waits for).
  engine::OpId beside(engine::ScheduleBuilder& b, const engine::ScheduleBuilder::Common& at,
                      engine::StreamId tp_stream, engine::CollectiveType type,
                      engine::GroupId group, std::uint64_t bytes) const;
  // A sharded layer's closing TP reduction of its output (or, backward, its input gradient), as
  // `at` (its category and name are set here): a reduce-scatter of `scattered` bytes under
  // sequence parallelism, an all-reduce of `reduced` bytes otherwise.
  engine::OpId reduce_across_tp(engine::ScheduleBuilder& b, engine::ScheduleBuilder::Common at,
                                const std::string& base, engine::GroupId tp,
                                std::uint64_t scattered, std::uint64_t reduced) const;
  // The overlapped part of a block's reduce-scatter on groups.tp_stream, after `after`.
  engine::OpId side_reduce_scatter(engine::ScheduleBuilder& b, engine::Rank rank,
                                   const LayerGroups& groups, const std::string& base,
                                   std::uint32_t mb, engine::OpId after, std::uint64_t bytes) const;

  const PlanContext& ctx_;
  const LayerKernels* kernels_ = nullptr;
  RecomputeGroups recompute_groups_;  // which layers full recompute re-runs
  ExpertParallelism moe_;
  int tp_ = 1;
  bool sequence_parallel_ = false;
  bool scatter_gather_ = false;  // parallel.pp_scatter_gather, where it applies
  bool overlap_ = false;         // parallel.tp_comm_overlap (validated: sequence parallel, tp > 1)
  int elem_ = 2;
  std::uint64_t activation_bytes_ = 0;  // b·s·h at the training precision
  // The sequence-parallel all-gathers' b·s·h: the next GEMM's input, in fp8 under fp8 training.
  std::uint64_t gather_bytes_ = 0;
  std::uint64_t scatter_bytes_ = 0;  // the forward reduce-scatter's: fp8 with fp8_comm
  // Latent attention's: b·s·(q latent or h, kv latent, rope key) (docs/parallelism.md "Latent
  // attention"); 0 for other attention.
  std::uint64_t latent_bytes_ = 0;
  // What a sharded layer's forward gathers under sequence parallelism, and what its backward
  // reduces over TP (the conjugate): the latents for latent attention, else b·s·h.
  std::uint64_t input_gather_bytes(const LayerCost& layer) const;
  std::uint64_t input_grad_bytes(const LayerCost& layer) const;
  std::uint64_t kv_bytes_ = 0;  // K and V of a whole sequence on this TP rank (context parallel)
  // cp_comm a2a (Ulysses): the rank's local Q, K and V (b·s/cp tokens of its TP heads), and its
  // attention output, each all-to-all'ed over the CP group.
  std::uint64_t qkv_local_bytes_ = 0, out_local_bytes_ = 0;
  std::uint8_t precision_ = 0;
};

}  // namespace clustersim::models
