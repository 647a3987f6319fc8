// Which transfer plan each communication instance of a run carries out, and by which algorithm.
// The same collective recurs thousands of times (every layer, every micro-batch), so a call's
// result is cached per (group or pair, type, requested algorithm, root, bytes) and the plan
// itself per (group or pair, type, algorithm, root, protocol). Used by the simulator's loop.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "engine/network/op_transfer.hpp"
#include "engine/network/transfer_plan.hpp"
#include "engine/rendezvous.hpp"
#include "engine/replica_images.hpp"
#include "engine/schedule.hpp"
#include "engine/simulator.hpp"
#include "engine/topology.hpp"

namespace clustersim::engine {

class CallPlans {
 public:
  using Resolved = std::pair<const TransferPlan*, Algorithm>;

  CallPlans(const Schedule& s, const Topology& topo, const AlgorithmOverrides& algorithms)
      : s_(s), topo_(topo), algorithms_(algorithms) {
    calls_by_group_.resize(s.groups.size());
    calls_by_sender_.resize(s.num_ranks);
  }

  // The plan of `instance` (matched in `rendezvous`), whose member `op` arrived last: an index
  // for operator[].
  std::uint32_t plan_for(const Rendezvous& rendezvous, const Rendezvous::Instance& instance,
                         const Op& op);
  const Resolved& operator[](std::uint32_t call) const { return resolved_[call]; }

  // The plan replica k (1 .. images.replicas() − 1) runs for its copy of `call`, whose member
  // `op` issued it in the simulated replica: the same call on the images of its members, chosen
  // and planned as a run of every rank plans that replica's own call (ReplicaImages).
  const TransferPlan& image_plan(std::uint32_t call, std::uint32_t k, const Op& op,
                                 const ReplicaImages& images);

 private:
  Resolved resolve(const Rendezvous::Instance& instance, const Op& op, bool p2p);
  // NCCL's tuner for a collective (direct, Simple for a send/recv or host copy).
  std::pair<Algorithm, Protocol> choose(const TransferCall& call, const Op& op, bool p2p) const;
  TransferPlan plan(const TransferCall& call, const Op& op, Algorithm algorithm,
                    Protocol protocol) const;

  using PlanKey =
      std::tuple<std::uint32_t, std::uint32_t, CollectiveType, Algorithm, std::uint32_t, Protocol>;
  // A collective call's signature: (group or sender, receiver, type, requested algorithm, root,
  // bytes). It is looked up once per transfer, millions of times in large runs.
  struct CallKey {
    std::uint32_t a, b;
    CollectiveType type;
    Algorithm algorithm;
    std::uint32_t root;
    std::uint64_t bytes;
    bool operator==(const CallKey&) const = default;
  };
  using CallList = std::vector<std::pair<CallKey, std::uint32_t>>;  // index into resolved_

  const Schedule& s_;
  const Topology& topo_;
  const AlgorithmOverrides& algorithms_;
  std::vector<Resolved> resolved_;  // plan_for's results
  std::deque<TransferPlan> plans_;  // stable addresses
  std::map<PlanKey, const TransferPlan*> plan_cache_;
  std::vector<CallList> calls_by_group_;   // indexed by GroupId
  std::vector<CallList> calls_by_sender_;  // send/recv, indexed by the sending rank
  // Per call (index into resolved_), its images' plans, replica 1 first (image_plan)
  std::vector<std::vector<const TransferPlan*>> image_plans_;
};

}  // namespace clustersim::engine
