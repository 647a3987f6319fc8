// Activation offload in the schedule (parallel.offload.activations; docs/offload.md): a layer's
// saved activations are copied to the host once its forward has ended and back before its
// backward, on the offload copy streams.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "engine/schedule.hpp"
#include "models/plans/activation_memory.hpp"
#include "models/plans/plan_context.hpp"

namespace clustersim::models {

class ActivationOffload {
 public:
  // `config`: as ActivationMemory's. The copies go on `b`'s streams `to_host` and `from_host`
  // (shared with an offloaded optimizer's).
  ActivationOffload(const PlanContext& ctx, const kernels::TransformerKernelConfig* config,
                    engine::ScheduleBuilder& b, engine::StreamId to_host,
                    engine::StreamId from_host);

  // Layer l's forward for micro-batch mb has ended in `forward`: its kept activations go to the
  // host (nothing for a layer the policy does not offload or that keeps nothing).
  void offload(engine::Rank r, int l, std::uint32_t mb, engine::OpId forward);
  // ... and come back before its backward (and its recompute), prefetched one layer ahead: the
  // copy starts once they are offloaded and the backward two layers before (`two_before`) has
  // ended, so it runs beside the backward of the layer before. `deps` gets the copy.
  void reload(engine::Rank r, int l, std::uint32_t mb, engine::OpId two_before,
              std::vector<engine::OpId>& deps);

 private:
  const std::string& name_of(int l) const;

  const PlanContext& ctx_;
  ActivationMemory memory_;
  engine::ScheduleBuilder& b_;
  engine::StreamId to_host_, from_host_;
  std::map<std::pair<int, std::uint32_t>, engine::OpId> offloaded_;  // (layer, mb) -> d2h copy
};

}  // namespace clustersim::models
