// Collective algorithms (DESIGN.md "Collective algorithms"): how many bytes each algorithm puts on
// which GPU pair, in which phases, with which latency term. Shared by every network model.
//
// Payload convention (nccl-tests): S is the collective's buffer size. all_reduce, broadcast,
// reduce: the buffer on each rank; all_gather, reduce_scatter, all_to_all, scatter, gather: the
// total buffer (n chunks of S/n); send_recv: the message.
#pragma once

#include <array>
#include <span>

#include "engine/network/transfer_plan.hpp"
#include "engine/schedule.hpp"
#include "engine/topology.hpp"

namespace clustersim::engine {

// Chosen algorithm per collective type; `automatic` entries fall back to choose_algorithm().
using AlgorithmOverrides = std::array<Algorithm, kNumCollectiveTypes>;
inline AlgorithmOverrides no_overrides() {
  AlgorithmOverrides a;
  a.fill(Algorithm::automatic);
  return a;
}

// NCCL-like default: ring for large messages and for groups inside one node, double binary tree
// for small all-reduces that cross nodes, direct for all-to-all, hierarchical never by default.
Algorithm choose_algorithm(CollectiveType type, double payload_bytes,
                           std::span<const EndpointId> members, const Topology& topology);

// The plan of `type` with `algorithm` (not automatic) over `members` (group order = ring order),
// `root` an index into members. Throws std::invalid_argument for combinations that do not exist.
TransferPlan plan_collective(CollectiveType type, Algorithm algorithm,
                             std::span<const EndpointId> members, std::uint32_t root,
                             const Topology& topology);

// nccl-tests' bus-bandwidth factor: busbw = algbw × factor.
double bus_bandwidth_factor(CollectiveType type, std::size_t n);

}  // namespace clustersim::engine
