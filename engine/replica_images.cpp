#include "engine/replica_images.hpp"

#include <stdexcept>
#include <string>

namespace clustersim::engine {

ReplicaImages::ReplicaImages(const Schedule& s) {
  if (s.mirror.size() != s.num_ranks)
    throw std::invalid_argument("replica images: the schedule is not folded");
  slot_.assign(s.num_ranks, kNone);
  std::vector<std::vector<Rank>> of;  // per simulated rank, the ranks that mirror it
  for (Rank r = 0; r < s.num_ranks; ++r)
    if (s.mirror[r] == r) {
      slot_[r] = static_cast<std::uint32_t>(of.size());
      of.emplace_back();
    }
  for (Rank r = 0; r < s.num_ranks; ++r)  // ascending, so each list is in replica order
    if (s.mirror[r] != r) of[slot_[s.mirror[r]]].push_back(r);
  if (of.empty()) throw std::invalid_argument("replica images: no rank is simulated");
  replicas_ = static_cast<std::uint32_t>(of.front().size() + 1);
  images_.reserve(of.size() * (replicas_ - 1));
  for (std::size_t i = 0; i < of.size(); ++i) {
    if (of[i].size() + 1 != replicas_)
      throw std::invalid_argument(
          "replica images: simulated ranks stand for " + std::to_string(replicas_) + " and " +
          std::to_string(of[i].size() + 1) + " replicas; every one must stand for as many");
    images_.insert(images_.end(), of[i].begin(), of[i].end());
  }
  local_.reserve(s.groups.size());
  for (const ProcessGroup& g : s.groups) {
    bool all = true;
    for (Rank r : g.ranks)
      all = all && s.mirror[r] == r;
    local_.push_back(all ? 1 : 0);
  }
}

}  // namespace clustersim::engine
