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

std::pair<Algorithm, Protocol> CallPlans::choose(const TransferCall& call, const Op& op,
                                                 bool p2p) const {
  if (p2p || is_host_copy(op)) return {Algorithm::direct, Protocol::simple};
  Algorithm algorithm = op.algorithm;
  if (algorithm == Algorithm::automatic)
    algorithm = algorithms_[static_cast<std::size_t>(call.type)];
  // NCCL's tuner: the fastest algorithm × protocol (only the protocol when one is forced).
  const CollectiveChoice choice =
      choose_collective(call.type, static_cast<double>(op.bytes), call.members, topo_, algorithm);
  return {choice.algorithm, choice.protocol};
}

TransferPlan CallPlans::plan(const TransferCall& call, const Op& op, Algorithm algorithm,
                             Protocol protocol) const {
  if (is_host_copy(op)) return host_copy_plan(call.members[0], call.members[1], topo_);
  try {
    return plan_of_call(call, algorithm, protocol, topo_);
  } catch (const std::invalid_argument& e) {
    throw SimulationError("simulate: " + s_.label(op) + ": " + e.what());
  }
}

CallPlans::Resolved CallPlans::resolve(const Rendezvous::Instance& instance, const Op& op,
                                       bool p2p) {
  // Members, type and root as op_transfer.hpp defines them (any member op gives the same).
  const TransferCall call = transfer_call(s_, op, topo_);
  const auto [algorithm, protocol] = choose(call, op, p2p);
  if (is_host_copy(op)) {
    plans_.push_back(plan(call, op, algorithm, protocol));
    return {&plans_.back(), algorithm};
  }
  const std::vector<EndpointId>& members = call.members;
  const PlanKey key{p2p ? members[0] : instance.group,
                    p2p ? members[1] : kNone,
                    call.type,
                    algorithm,
                    call.root,
                    protocol};
  auto it = plan_cache_.find(key);
  if (it != plan_cache_.end()) return {it->second, algorithm};
  plans_.push_back(plan(call, op, algorithm, protocol));
  plan_cache_.emplace(key, &plans_.back());
  return {&plans_.back(), algorithm};
}

const TransferPlan& CallPlans::image_plan(std::uint32_t call, std::uint32_t k, const Op& op,
                                          const ReplicaImages& images) {
  if (image_plans_.size() <= call) image_plans_.resize(resolved_.size());
  auto& row = image_plans_[call];
  if (row.empty()) row.assign(images.replicas() - 1, nullptr);
  if (const TransferPlan* p = row[k - 1]) return *p;
  TransferCall image = transfer_call(s_, op, topo_);
  const Rank own = images.image(op.rank, k);
  for (EndpointId& m : image.members)  // a host copy's host endpoint is its GPU's
    m = topo_.is_host_endpoint(m) ? topo_.host_endpoint(own) : images.image(m, k);
  for (EndpointId& m : image.comm)
    m = images.image(m, k);
  const bool p2p = op.kind == OpKind::send || op.kind == OpKind::recv;
  const auto [algorithm, protocol] = choose(image, op, p2p);
  plans_.push_back(plan(image, op, algorithm, protocol));
  row[k - 1] = &plans_.back();
  return plans_.back();
}

}  // namespace clustersim::engine
