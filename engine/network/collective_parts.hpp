// Internal to engine/network: the pieces the generic collective algorithms (collectives.cpp) and
// NCCL's (nccl_collectives.cpp) share. Not part of the engine's interface.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/network/collectives.hpp"

namespace clustersim::engine::detail {

using Flows = std::vector<FlowSpec>;

[[noreturn]] void unsupported(CollectiveType type, Algorithm algorithm, const char* allowed);
// A phase whose latency is `steps` algorithm steps, each costing the slowest route of the phase.
Phase make_phase(const Topology& topology, Flows flows, std::int64_t steps);
void add_phase(TransferPlan& plan, const Topology& topology, Flows flows, std::int64_t steps);
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

// Whether `algorithm` on `type` is one of NCCL's plans (nccl_collectives.cpp), and that plan.
bool nccl_pair(CollectiveType type, Algorithm algorithm);
TransferPlan nccl_transfer_plan(CollectiveType type, Algorithm algorithm,
                                std::span<const EndpointId> members, const Topology& topology,
                                Protocol protocol);

}  // namespace clustersim::engine::detail
