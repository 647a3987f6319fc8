// ZeRO-Offload's optimizer step in a rank's schedule (parallel.offload.optimizer,
// docs/offload.md): the reduced gradient shard goes to host memory over PCIe bucket by bucket,
// each copy as soon as its reduction of the last micro-batch ends (as DeepSpeed copies the
// partition during the backward), so the copies overlap the rest of the backward; the CPU steps
// at the host's memory bandwidth once all have landed, and the updated 16-bit shard comes back.
#pragma once

#include <span>
#include <vector>

#include "engine/schedule.hpp"
#include "models/scenario.hpp"

namespace clustersim::models {

struct OffloadStreams {
  engine::StreamId compute = 0;  // where the backward ran
  engine::StreamId to_host = 0, host = 0, from_host = 0;
};

// Emits rank r's offloaded step of `params` parameters after its gradient reductions
// `reduce_ops` (the CPU step also after `also_after`) and returns the upload of the updated
// shard, its last op: the strategy's parameter all-gather (ZeRO-1/2) follows it.
engine::OpId emit_offloaded_optimizer(engine::ScheduleBuilder& b, const TrainingConfig& training,
                                      engine::Rank r, const OffloadStreams& streams,
                                      const std::vector<engine::OpId>& reduce_ops, double params,
                                      std::span<const engine::OpId> also_after);

}  // namespace clustersim::models
