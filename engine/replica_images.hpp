// A folded run's other replicas, as the network sees them (docs/performance.md "Folding checked
// by the network"). A folded schedule (Schedule::mirror) issues the ops of one data-parallel
// replica; under a network model with contention the other replicas' traffic still shares links
// with it. The simulator then starts, beside each transfer that stays inside the simulated
// replica, the same transfer of every other replica (its images, on their own GPUs and links),
// and checks that each image ends when its original does: the run is then the whole run.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/network/transfer_plan.hpp"
#include "engine/schedule.hpp"
#include "engine/topology.hpp"

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

// One call of a folded run (a plan and a payload size) as images_to_carry() sees it.
struct ReplicaCall {
  const TransferPlan* plan = nullptr;
  double bytes = 0.0;
  bool local = false;  // inside the simulated replica (ReplicaImages::local, or a send/recv)
  std::vector<const TransferPlan*> images;  // local calls: replica k's plan at k − 1
};

// Which local calls' images must be carried, per call (docs/performance.md "Folding checked by
// the network"). Carrying an image is needed only where its traffic can meet other traffic than
// its replica's copies of the same private calls. A local call may go uncarried (private) when
//   - its images are its own shape on their links: the same phases, latencies, rate caps and
//     bytes, each flow's route as long with the same bandwidth link for link, the same
//     calibration shape;
//   - no link of it or of its images carries a flow of a carried or cross-replica call;
//   - each replica's private links are its own (no link serves two replicas), and link for link
//     they map one to one onto the simulated replica's (the same map for every private call).
// Replica k's private flows then form their own max-min problem, the simulated replica's under
// a renaming of the links, with the same flows starting at the same instants as long as the
// replicas keep step: the same rates, the same ends. The carried images check the rest.
std::vector<std::uint8_t> images_to_carry(const std::vector<ReplicaCall>& calls,
                                          const Topology& topology);

}  // namespace clustersim::engine
