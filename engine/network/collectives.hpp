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

// What NCCL's tuner would pick for one call: algorithm, protocol, channels, and the estimate.
struct CollectiveChoice {
  Algorithm algorithm = Algorithm::ring;
  Protocol protocol = Protocol::simple;
  int channels = 1;
  double estimate_s = 0.0;  // the tuner's uncontended time estimate
};

// NCCL's method (docs/network.md "The tuner"): estimate every eligible algorithm × protocol
// (latency from NCCL's constants + payload over the plan's bottleneck and per-channel limits)
// and take the fastest. With `algorithm` given (not automatic) only its protocols are compared.
// all_to_all and rooted collectives are not tuned (direct / ring, Simple).
CollectiveChoice choose_collective(CollectiveType type, double payload_bytes,
                                   std::span<const EndpointId> members, const Topology& topology,
                                   Algorithm algorithm = Algorithm::automatic);
// choose_collective(...).algorithm.
Algorithm choose_algorithm(CollectiveType type, double payload_bytes,
                           std::span<const EndpointId> members, const Topology& topology);

// The channel count NCCL's topology search would find for this group (docs/network.md
// "Channels"): 2 × the NICs the group's GPUs use on a node when they span nodes over NVLink
// nodes (NICs alone otherwise), the NVLink bandwidth / 25 GB/s on one NVSwitch node, 2 on a PCIe
// node; simulation.nccl.channels overrides.
int collective_channels(std::span<const EndpointId> members, const Topology& topology);

// The plan of `type` with `algorithm` (not automatic) and `protocol` over `members` (group
// order = ring order), `root` an index into members. Throws std::invalid_argument for
// combinations that do not exist.
TransferPlan plan_collective(CollectiveType type, Algorithm algorithm,
                             std::span<const EndpointId> members, std::uint32_t root,
                             const Topology& topology, Protocol protocol = Protocol::simple);

// nccl-tests' sendrecv_perf: every member sends the payload to the next (member i to i+1 mod n)
// and receives it from the one before, at once, on one communicator of all of them (NCCL's p2p
// channels and parts: docs/network.md "Sends"). A send_recv of plan_collective is one such send
// on a communicator of its pair.
TransferPlan plan_neighbour_sends(std::span<const EndpointId> members, const Topology& topology);

// One send from `src` to `dst` posted on a communicator of `comm` (which holds both; empty: a
// communicator of the pair, as plan_collective's send_recv): NCCL's parts on that
// communicator's p2p channels (docs/network.md "Sends: the communicator"). Its ranks and nodes
// are the pair's, so a calibration profile's send_recv figures still apply.
TransferPlan plan_send(EndpointId src, EndpointId dst, std::span<const EndpointId> comm,
                       const Topology& topology);

// nccl-tests' bus-bandwidth factor: busbw = algbw × factor.
double bus_bandwidth_factor(CollectiveType type, std::size_t n);

}  // namespace clustersim::engine
