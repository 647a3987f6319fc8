#include "models/plans/deepspeed_pipeline.hpp"

#include <algorithm>
#include <string>

#include "models/plans/tied_embeddings.hpp"

namespace clustersim::models {

using engine::Category;
using engine::OpId;

OpId DeepSpeedPipe::transfer(engine::Rank r, bool send, bool forward, const Transfer& t) const {
  // PartitionedTensor: each TP rank holds numel / tp elements of the boundary tensor.
  const std::uint64_t bytes =
      t.full_bytes / static_cast<std::uint64_t>(std::max(1, ctx_.parallel.tp));
  const engine::ScheduleBuilder::Common c{
      r,
      compute_,
      Category::pp_comm,
      send ? (forward ? "send act" : "send grad") : (forward ? "recv act" : "recv grad"),
      t.mb,
      {}};
  return send ? sink_.ops.send(c, t.peer, bytes, t.tag) : sink_.ops.recv(c, t.peer, bytes, t.tag);
}

OpId DeepSpeedPipe::gather(engine::Rank r, engine::GroupId tp, const Transfer& t,
                           const char* what) const {
  if (ctx_.parallel.tp <= 1 || tp == engine::kNone) return engine::kNone;
  const engine::ScheduleBuilder::Common c{r, compute_, Category::pp_comm, what, t.mb, {}};
  // An all-gather's size is the gathered buffer (collectives.hpp).
  return sink_.ops.collective(c, engine::CollectiveType::all_gather, tp, t.full_bytes);
}

void DeepSpeedPipe::flush(engine::Rank r) {
  if (!pending_) return;
  transfer(r, true, false, *pending_);
  pending_.reset();
}

std::vector<OpId> DeepSpeedPipe::receive(engine::Rank r, bool forward, long peer,
                                         std::uint64_t full_bytes, std::uint32_t tag,
                                         std::uint32_t mb, engine::GroupId tp) {
  std::vector<OpId> deps;
  if (!forward) flush(r);
  if (peer < 0) return deps;
  const Transfer t{static_cast<engine::Rank>(peer), full_bytes, tag, mb};
  deps.push_back(transfer(r, false, forward, t));
  if (forward) flush(r);
  // pipe/engine.py: _exec_forward_pass gathers its input (part_input.full());
  // _exec_backward_pass restores its output's storage (part_output.full()) and gathers the
  // received gradient (part_grad.full()).
  for (const char* what : forward ? std::vector<const char*>{"gather act"}
                                  : std::vector<const char*>{"gather output", "gather grad"})
    if (const OpId g = gather(r, tp, t, what); g != engine::kNone) deps.push_back(g);
  return deps;
}

void DeepSpeedPipe::send(engine::Rank r, bool forward, engine::Rank peer, std::uint64_t full_bytes,
                         std::uint32_t tag, std::uint32_t mb) {
  const Transfer t{peer, full_bytes, tag, mb};
  if (forward)
    transfer(r, true, true, t);
  else
    pending_ = t;
}

void DeepSpeedPipe::finish(engine::Rank r, int stage, engine::Rank other) {
  flush(r);
  tied_embedding_grad_all_reduce(ctx_, sink_, r, stage, other, compute_, {});
}

}  // namespace clustersim::models
