// Internal to engine/network: the pieces the generic collective algorithms (collectives.cpp) and
// NCCL's (nccl_collectives.cpp) share. Not part of the engine's interface.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/network/collectives.hpp"

namespace clustersim::engine::detail {

using Flows = std::vector<FlowSpec>;

[[noreturn]] void unsupported(CollectiveType type, Algorithm algorithm, const char* allowed);
// A phase whose latency is `steps` algorithm steps, each costing the slowest route of the phase.
Phase make_phase(const Topology& topology, Flows flows, std::int64_t steps);
void add_phase(TransferPlan& plan, const Topology& topology, Flows flows, std::int64_t steps);
// Seconds per payload byte of a phase's flows without contention: the most loaded link
// (optionally NVLink links only).
double bottleneck(const Flows& flows, const Topology& topology, bool nvlink_only = false);
// Ring edges member[i] -> member[i+1 mod n], each carrying `bytes` per payload byte.
void add_ring(Flows& flows, std::span<const EndpointId> ring, double bytes);
// Every ordered pair i != j carries `bytes`.
void add_all_pairs(Flows& flows, std::span<const EndpointId> members, double bytes);
// NCCL's double binary tree (ncclGetBtree / ncclGetDtree): a rank's parent in each tree.
std::size_t btree_parent(std::size_t n, std::size_t rank);
std::size_t dtree_second_parent(std::size_t n, std::size_t rank);
// Members grouped by node in order of first appearance; within a node they keep group order.
std::vector<std::vector<EndpointId>> group_by_node(std::span<const EndpointId> members,
                                                   const Topology& topology);
// How many distinct nodes the members sit on.
std::size_t count_nodes(std::span<const EndpointId> members, const Topology& topology);
// Whether the members of a node talk over NVLink (NCCL's intra hardware class NVLINK vs PCI);
// with one member per node, the node's kind. `groups` as group_by_node gives them.
bool nvlink_inside(const std::vector<std::vector<EndpointId>>& groups, const Topology& topology);
// The distinct NICs a node's members leave it through (at least 1).
int rails_of(const std::vector<EndpointId>& node_members, const Topology& topology);

// Flows keyed by (src, dst): whatever puts bytes on the same GPU pair (NCCL's channels, PXN
// relays) becomes one flow of the summed bytes, so the flow count does not grow with them.
class FlowSet {
 public:
  void add(EndpointId src, EndpointId dst, double bytes) {
    if (src == dst || bytes <= 0.0) return;
    const std::uint64_t key = (static_cast<std::uint64_t>(src) << 32) | dst;
    const auto [it, fresh] = index_.emplace(key, flows_.size());
    if (fresh)
      flows_.push_back({src, dst, bytes});
    else
      flows_[it->second].bytes_per_payload_byte += bytes;
  }
  Flows take() { return std::move(flows_); }

 private:
  Flows flows_;
  std::unordered_map<std::uint64_t, std::size_t> index_;
};

// NCCL's all-to-all across nodes (nccl_p2p.cpp): every pair's S/n as grouped send/recv, the bytes
// for a GPU of another node relayed over NVLink to the local GPU on the peer's rail (PXN).
TransferPlan nccl_all_to_all(std::span<const EndpointId> members, const Topology& topology);
// NCCL's sends inside communicator `comm`, all at once, each (sender, receiver) carrying the whole
// payload in parts on its p2p channels, with PXN relays across nodes (nccl_p2p.cpp).
TransferPlan nccl_sends(std::span<const EndpointId> comm,
                        std::span<const std::pair<EndpointId, EndpointId>> sends,
                        const Topology& topology);

// Whether `algorithm` on `type` is one of NCCL's plans (nccl_collectives.cpp), and that plan.
bool nccl_pair(CollectiveType type, Algorithm algorithm);
TransferPlan nccl_transfer_plan(CollectiveType type, Algorithm algorithm,
                                std::span<const EndpointId> members, const Topology& topology,
                                Protocol protocol);

}  // namespace clustersim::engine::detail
