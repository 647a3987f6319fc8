#include "engine/network/profile_lookup.hpp"

#include "engine/network/collectives.hpp"

namespace clustersim::engine {

std::optional<ProfiledCost> ProfileLookup::find(const TransferPlan& plan, double payload_bytes) {
  if (profile_ == nullptr || profile_->empty() || plan.ranks == 0 || plan.phases.empty())
    return std::nullopt;
  const auto key = std::tuple(plan.collective, plan.nodes, plan.ranks);
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    Entry e;
    e.match = profile_->lookup(plan.collective, {plan.ranks, plan.nodes});
    if (e.match.fit != nullptr) {
      e.bus_factor = e.match.exact ? e.match.fit->bus_factor
                                   : bus_bandwidth_factor(plan.collective, plan.ranks);
      e.used.assign(e.match.fit->ranges.size(), false);
    }
    it = entries_.emplace(key, std::move(e)).first;
  }
  Entry& e = it->second;
  if (e.match.fit == nullptr) return std::nullopt;
  const ProtocolRange& r = e.match.fit->range_for(payload_bytes);
  e.used[static_cast<std::size_t>(&r - e.match.fit->ranges.data())] = true;
  return ProfiledCost{r.alpha_s, r.busbw, e.bus_factor};
}

std::vector<ProfileUse> ProfileLookup::uses() const {
  std::vector<ProfileUse> out;
  for (const auto& [key, e] : entries_) {
    ProfileUse u;
    u.type = std::get<0>(key);
    u.requested = {std::get<2>(key), std::get<1>(key)};
    u.fit = e.match.fit;
    u.exact = e.match.exact;
    u.bus_factor = e.bus_factor;
    for (std::size_t i = 0; i < e.used.size(); ++i) {
      if (e.used[i]) u.ranges.push_back(i);
    }
    out.push_back(std::move(u));
  }
  return out;
}

}  // namespace clustersim::engine
