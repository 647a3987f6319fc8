// Which transfer a communication op took part in, as simulate() hands it to the network model:
// the members, the collective type and root, and (after a run) the plan with the algorithm and
// protocol the run chose. Shared by the simulator and by what asks afterwards which ops crossed a
// link (the GUI's topology → timeline selection), so the two can never disagree on routing.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/network/transfer_plan.hpp"
#include "engine/schedule.hpp"
#include "engine/timeline.hpp"
#include "engine/topology.hpp"

namespace clustersim::engine {

struct TransferCall {
  // Group order for a collective (its ring order); sender then receiver for a send/recv and a
  // host copy (the GPU and its host endpoint, in the copy's direction).
  std::vector<EndpointId> members;
  CollectiveType type = CollectiveType::send_recv;
  std::uint32_t root = 0;  // index into members (broadcast, reduce, scatter, gather)
  // A send/recv posted on a group's communicator (Schedule::send_group): its members in group
  // order; empty for a communicator of the pair.
  std::vector<EndpointId> comm;
};

// `op` is a collective, send, recv or host copy of `schedule`. Rank r runs on GPU endpoint r;
// its host memory is topology.host_endpoint(r).
TransferCall transfer_call(const Schedule& schedule, const Op& op, const Topology& topology);

// The plan of `call` with `algorithm` and `protocol`: a send/recv as plan_send on its
// communicator, a collective as plan_collective (a host copy's call takes host_copy_plan
// instead). Throws std::invalid_argument like them.
TransferPlan plan_of_call(const TransferCall& call, Algorithm algorithm, Protocol protocol,
                          const Topology& topology);

// The plan simulate() ran communication op `id` with: its transfer_call with the algorithm and
// protocol `timeline` recorded for it (a send/recv or host copy is always direct, Simple). Throws
// std::invalid_argument for a combination plan_collective() does not know.
TransferPlan plan_of_op(const Schedule& schedule, const Timeline& timeline, OpId id,
                        const Topology& topology);

// A copy between a GPU and its host memory: one flow over the route from `src` to `dst` after the
// route's latency, no NCCL protocol or channel limit (a cudaMemcpyAsync on a copy engine), and no
// calibration profile's figures (ranks = 0).
TransferPlan host_copy_plan(EndpointId src, EndpointId dst, const Topology& topology);

// Whether any flow of `plan` that carries bytes has a link of `links` on its route.
bool plan_crosses(const TransferPlan& plan, const Topology& topology,
                  const std::vector<LinkId>& links);

}  // namespace clustersim::engine
