// The tied word embedding's gradient all-reduce between the first and the last pipeline stage.
// With pipeline parallelism and tied input/output embeddings the last stage holds a copy of the
// word embedding for the LM head; after the flush the two copies' gradients are summed so that
// both step the same weight:
// - Megatron-LM (the default engine): `_allreduce_word_embedding_grads` in
//   megatron/core/distributed/finalize_model_grads.py (NVIDIA/Megatron-LM, 2024
//   releases), over the embedding group of the first and last stage, after finish_grad_sync (the
//   data-parallel reduction) and the sequence-parallel layer-norm all-reduce, on `main_grad`;
//   `allreduce_embedding_grads` in megatron/optimizer/optimizer.py before it, inline in
//   training.py's train_step in 2021;
// - DeepSpeed's PipelineEngine: ReduceTiedGrads (deepspeed/runtime/pipe/engine.py
//   `_exec_reduce_tied_grads`), before ReduceGrads (deepspeed_pipeline.hpp).
// Its size: the rank's VocabParallelEmbedding shard, vocab/tp × hidden elements of the
// gradient dtype (PlanContext::gradient_bytes, as the data-parallel reduction counts them).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "engine/schedule.hpp"
#include "models/plans/plan_context.hpp"

namespace clustersim::models {

// An all-reduce of `bytes` between rank `r` and `other` (their group of `kind`), on `stream`
// after `deps`, counted as data-parallel communication: the tied embedding's, DualPipe's copies'.
engine::OpId pair_all_reduce(const ScheduleSink& sink, engine::Rank r, engine::Rank other,
                             engine::StreamId stream, std::string_view name, std::string_view kind,
                             std::uint64_t bytes, std::span<const engine::OpId> deps);

// Whether rank `stage` of the scenario's pipeline all-reduces a tied embedding's gradient: a
// transformer with tied embeddings, pp > 1, the first or the last stage.
bool reduces_tied_embedding(const PlanContext& ctx, int stage);

// The all-reduce of rank `r` (stage `stage`) with `other`, the rank at the other end of its
// pipeline, on `stream` after `deps`; kNone where reduces_tied_embedding is false.
engine::OpId tied_embedding_grad_all_reduce(const PlanContext& ctx, const ScheduleSink& sink,
                                            engine::Rank r, int stage, engine::Rank other,
                                            engine::StreamId stream,
                                            const std::vector<engine::OpId>& deps);

}  // namespace clustersim::models
