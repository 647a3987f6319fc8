// DeepSpeed's PipelineEngine (`parallel.pipeline_engine: deepspeed`; docs/parallelism.md
// "DeepSpeed's pipeline engine"), as Megatron-DeepSpeed ran it in 2021–2022
// (microsoft/DeepSpeed deepspeed/runtime/pipe/{engine,schedule,p2p}.py at e2fdd254e, 2021-09-29,
// and 56c522386, 2022-04-19):
// - p2p.py sends with a blocking dist.broadcast in a two-rank group (or send/recv), issued from
//   the engine's step on the compute stream: the next kernel waits for the transfer, and a send
//   cannot finish before its peer posts the matching receive;
// - with tensor parallelism (is_pipe_partitioned = is_grad_partitioned = is_model_parallel) each
//   TP rank sends only its 1/tp slice of the boundary tensor (PartitionedTensor), and the receiver
//   all-gathers it over the TP group (PartitionedTensor.full()); before a backward the stage also
//   re-gathers its own partitioned output, whose storage the forward dropped;
// - TrainSchedule runs 1F1B's order of passes but sends an activation at the start of the next
//   step and a backward's input gradient only after the next forward's activation has arrived;
// - after the last step: ReduceTiedGrads (the tied embedding's gradient all-reduced between the
//   first and the last stage), ReduceGrads (the data-parallel reduction, on the compute stream,
//   after the flush), then the optimizer.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "engine/schedule.hpp"
#include "models/plans/plan_context.hpp"

namespace clustersim::models {

// Ranks are built one after the other: the pending gradient send belongs to the rank in build.
class DeepSpeedPipe {
 public:
  DeepSpeedPipe(const PlanContext& ctx, const ScheduleSink& sink, engine::StreamId compute)
      : ctx_(ctx), sink_(sink), compute_(compute) {}

  // The receive a forward (`forward`) or backward step of rank `r` starts with, from `peer`
  // (-1: none at this end of the pipeline) of a boundary tensor of `full_bytes`, in
  // TrainSchedule's order: a forward receives its activation slice, sends the gradient the
  // previous backward left, then gathers the activation over `tp`; a backward first sends that
  // gradient, receives its output's gradient slice, then gathers its own output and that
  // gradient. Returns the ops the pass's first layer waits for.
  std::vector<engine::OpId> receive(engine::Rank r, bool forward, long peer,
                                    std::uint64_t full_bytes, std::uint32_t tag, std::uint32_t mb,
                                    engine::GroupId tp);
  // The send a step ends with: an activation goes at once (the next step's first command), a
  // backward's input gradient waits for the next step.
  void send(engine::Rank r, bool forward, engine::Rank peer, std::uint64_t full_bytes,
            std::uint32_t tag, std::uint32_t mb);
  // After rank `r`'s last step: its pending gradient send, then ReduceTiedGrads on the first and
  // the last stage of a transformer with tied embeddings: the word embedding's gradient
  // (vocab/tp × hidden elements of the gradient dtype) all-reduced with `other`, the rank at the
  // other end of the pipeline, on the compute stream.
  void finish(engine::Rank r, int stage, engine::Rank other);

 private:
  struct Transfer {
    engine::Rank peer = 0;
    std::uint64_t full_bytes = 0;
    std::uint32_t tag = 0, mb = 0;
  };
  // One blocking transfer on the compute stream: the boundary tensor's 1/tp slice.
  engine::OpId transfer(engine::Rank r, bool send, bool forward, const Transfer& t) const;
  // The all-gather over `tp` that rebuilds a partitioned tensor (kNone with tp = 1).
  engine::OpId gather(engine::Rank r, engine::GroupId tp, const Transfer& t,
                      const char* what) const;
  void flush(engine::Rank r);

  const PlanContext& ctx_;
  ScheduleSink sink_;
  engine::StreamId compute_ = 0;
  std::optional<Transfer> pending_;  // the input-gradient send of the rank in build
};

}  // namespace clustersim::models
