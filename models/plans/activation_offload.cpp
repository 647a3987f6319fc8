#include "models/plans/activation_offload.hpp"

#include "models/offload.hpp"

namespace clustersim::models {

ActivationOffload::ActivationOffload(const PlanContext& ctx,
                                     const kernels::TransformerKernelConfig* config,
                                     engine::ScheduleBuilder& b, engine::StreamId to_host,
                                     engine::StreamId from_host)
    : ctx_(ctx), memory_(ctx, config), b_(b), to_host_(to_host), from_host_(from_host) {}

const std::string& ActivationOffload::name_of(int l) const {
  return ctx_.layers[static_cast<std::size_t>(l)].name;
}

void ActivationOffload::offload(engine::Rank r, int l, std::uint32_t mb, engine::OpId forward) {
  if (!offloads_activations(ctx_, l)) return;
  const auto bytes = static_cast<std::uint64_t>(memory_.at(l).kept);
  if (bytes == 0) return;
  const engine::OpId after[] = {forward};
  offloaded_[{l, mb}] =
      b_.copy({r, to_host_, engine::Category::forward, name_of(l) + kActivationToHost, mb, after},
              bytes, engine::CopyDirection::to_host);
}

void ActivationOffload::reload(engine::Rank r, int l, std::uint32_t mb, engine::OpId two_before,
                               std::vector<engine::OpId>& deps) {
  const auto it = offloaded_.find({l, mb});
  if (it == offloaded_.end()) return;
  std::vector<engine::OpId> after = {it->second};
  if (two_before != engine::kNone) after.push_back(two_before);
  deps.push_back(b_.copy(
      {r, from_host_, engine::Category::backward, name_of(l) + kActivationFromHost, mb, after},
      static_cast<std::uint64_t>(memory_.at(l).kept), engine::CopyDirection::from_host));
  offloaded_.erase(it);
}

}  // namespace clustersim::models
