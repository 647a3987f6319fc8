#include "engine/sm_sharing.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace clustersim::engine {

SmSharing::SmSharing(const ComputeModel& compute, const KernelTable& table, std::size_t lists,
                     std::size_t ranks, std::size_t streams_per_rank)
    : compute_(compute),
      table_(table),
      lists_(lists),
      streams_per_rank_(std::max<std::size_t>(1, streams_per_rank)),
      enabled_(lists > 0 && compute.models_sm_sharing()) {
  if (!enabled_) return;
  held_.assign(ranks, 0);
  gpu_running_.assign(ranks, 0);
  delay_.assign(ranks, Time::zero());
  running_.assign(ranks * streams_per_rank_, Running{});
}

Time SmSharing::duration(std::uint32_t work, std::uint32_t held, Time base) {
  if (held == 0 || work >= lists_) return base;
  auto it = by_held_.find(held);
  if (it == by_held_.end()) {
    // Costed once per distinct count: a run sees a few (its collectives' channel counts and
    // their sums where two overlap).
    std::vector<Time> d = compute_.kernel_list_durations_sharing(table_, held);
    if (d.size() != lists_)
      throw std::logic_error("compute model costed " + std::to_string(d.size()) + " of " +
                             std::to_string(lists_) + " kernel lists with SMs held");
    it = by_held_.emplace(held, std::move(d)).first;
  }
  return it->second[work];
}

Time SmSharing::repace(Running& r, std::uint32_t held, Time now) {
  const double done = r.duration.ps() > 0 ? static_cast<double>((now - r.since).ps()) /
                                                static_cast<double>(r.duration.ps())
                                          : r.left;
  r.left = std::max(0.0, r.left - done);
  r.since = now;
  r.duration = duration(r.work, held, r.base);
  return now + Time::from_ps(static_cast<std::int64_t>(
                   std::llround(r.left * static_cast<double>(r.duration.ps()))));
}

std::vector<std::pair<OpId, Time>> SmSharing::take_moved_starts() {
  return std::move(moved_starts_);
}

}  // namespace clustersim::engine
