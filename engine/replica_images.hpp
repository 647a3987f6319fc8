// A folded run's other replicas, as the network sees them (docs/performance.md "Folding checked
// by the network"). A folded schedule (Schedule::mirror) issues the ops of one data-parallel
// replica; under a network model with contention the other replicas' traffic still shares links
// with it. The simulator then starts, beside each transfer that stays inside the simulated
// replica, the same transfer of every other replica (its images, on their own GPUs and links),
// and checks that each image ends when its original does: the run is then the whole run.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/schedule.hpp"

namespace clustersim::engine {

class ReplicaImages {
 public:
  // The k-th image of simulated rank r (k = 1 .. replicas() − 1) is the k-th lowest rank that
  // mirrors r: the rank of replica k with r's other coordinates, as models/plans/folding.cpp
  // numbers them. Throws std::invalid_argument unless every simulated rank has as many.
  explicit ReplicaImages(const Schedule& schedule);

  std::uint32_t replicas() const { return replicas_; }
  Rank image(Rank r, std::uint32_t k) const {
    return images_[std::size_t{slot_[r]} * (replicas_ - 1) + (k - 1)];
  }
  // Whether every member of group g is simulated: its transfers stay inside the simulated
  // replica and have images. A group with mirrored members already spans every replica.
  bool local(GroupId g) const { return local_[g] != 0; }

 private:
  std::uint32_t replicas_ = 1;
  std::vector<std::uint32_t> slot_;  // per simulated rank: its index among the simulated ranks
  std::vector<Rank> images_;         // per simulated rank, its replicas() − 1 images in order
  std::vector<std::uint8_t> local_;  // per group
};

}  // namespace clustersim::engine
