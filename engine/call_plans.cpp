#include "engine/call_plans.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "engine/network/op_transfer.hpp"

namespace clustersim::engine {

std::uint32_t CallPlans::plan_for(const Rendezvous& rendezvous,
                                  const Rendezvous::Instance& instance, const Op& op) {
  const bool p2p = instance.group == kNone;
  std::uint32_t a = instance.group;
  std::uint32_t b = kNone;
  if (p2p) {  // only here: the first member's op is a cache miss (another rank's op)
    const Op& first = s_.ops[rendezvous.ops[instance.ops_begin]];
    a = first.rank;
    b = first.group_or_peer;
  }
  // A send/recv's tag only matches it with its peer (each micro-batch has its own): its plan
  // does not depend on it, and keying on it grew a pipeline sender's list by two entries a
  // micro-batch, scanned at every transfer (a fifth of the lookups' time on GPT-3's 192).
  const bool tagged = op.kind == OpKind::send || op.kind == OpKind::recv;
  const CallKey call{a, b, op.collective, op.algorithm, tagged ? 0u : op.tag(), op.bytes};
  // Looked up among the calls its own group (or sender) made before: a handful of shapes per
  // group, scanned in a small array that stays in cache, instead of one large hash table.
  auto& calls = p2p ? calls_by_sender_[a] : calls_by_group_[a];
  auto hit = std::find_if(calls.begin(), calls.end(),
                          [&](const auto& entry) { return entry.first == call; });
  if (hit == calls.end()) {
    resolved_.push_back(resolve(instance, op, p2p));
    calls.emplace_back(call, static_cast<std::uint32_t>(resolved_.size() - 1));
    hit = calls.end() - 1;
  }
  return hit->second;
}

CallPlans::Resolved CallPlans::resolve(const Rendezvous::Instance& instance, const Op& op,
                                       bool p2p) {
  // Members, type and root as op_transfer.hpp defines them (any member op gives the same).
  const TransferCall call = transfer_call(s_, op, topo_);
  const std::vector<EndpointId>& members = call.members;
  const CollectiveType type = call.type;
  const std::uint32_t root = call.root;
  if (is_host_copy(op)) {
    plans_.push_back(host_copy_plan(members[0], members[1], topo_));
    return {&plans_.back(), Algorithm::direct};
  }
  Algorithm algorithm = Algorithm::direct;
  Protocol protocol = Protocol::simple;
  if (!p2p) {
    algorithm = op.algorithm;
    if (algorithm == Algorithm::automatic) algorithm = algorithms_[static_cast<std::size_t>(type)];
    // NCCL's tuner: the fastest algorithm × protocol (only the protocol when one is forced).
    const CollectiveChoice choice =
        choose_collective(type, static_cast<double>(op.bytes), members, topo_, algorithm);
    algorithm = choice.algorithm;
    protocol = choice.protocol;
  }
  const PlanKey key{
      p2p ? members[0] : instance.group, p2p ? members[1] : kNone, type, algorithm, root, protocol};
  auto it = plan_cache_.find(key);
  if (it != plan_cache_.end()) return {it->second, algorithm};
  try {
    plans_.push_back(plan_collective(type, algorithm, members, root, topo_, protocol));
  } catch (const std::invalid_argument& e) {
    throw SimulationError("simulate: " + s_.label(op) + ": " + e.what());
  }
  plan_cache_.emplace(key, &plans_.back());
  return {&plans_.back(), algorithm};
}

}  // namespace clustersim::engine
