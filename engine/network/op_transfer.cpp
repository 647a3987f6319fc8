#include "engine/network/op_transfer.hpp"

#include <algorithm>

#include "engine/network/collectives.hpp"

namespace clustersim::engine {

TransferCall transfer_call(const Schedule& schedule, const Op& op, const Topology& topology) {
  TransferCall call;
  if (is_host_copy(op)) {
    const EndpointId host = topology.host_endpoint(op.rank);
    if (op.tag() == static_cast<std::uint32_t>(CopyDirection::to_host))
      call.members = {op.rank, host};
    else
      call.members = {host, op.rank};
  } else if (op.kind == OpKind::collective) {
    const auto& ranks = schedule.groups[op.group_or_peer].ranks;
    call.members.assign(ranks.begin(), ranks.end());
    call.type = op.collective;
    call.root = op.tag();
  } else if (op.kind == OpKind::send) {
    call.members = {op.rank, op.group_or_peer};
  } else {  // a recv: its peer is the sender
    call.members = {op.group_or_peer, op.rank};
  }
  if (op.kind == OpKind::send || op.kind == OpKind::recv) {
    const GroupId g = schedule.send_group(call.members[0], call.members[1]);
    if (g != kNone)
      call.comm.assign(schedule.groups[g].ranks.begin(), schedule.groups[g].ranks.end());
  }
  return call;
}

TransferPlan plan_of_call(const TransferCall& call, Algorithm algorithm, Protocol protocol,
                          const Topology& topology) {
  if (call.type == CollectiveType::send_recv && call.members.size() == 2)
    return plan_send(call.members[0], call.members[1], call.comm, topology);
  return plan_collective(call.type, algorithm, call.members, call.root, topology, protocol);
}

TransferPlan host_copy_plan(EndpointId src, EndpointId dst, const Topology& topology) {
  TransferPlan plan;
  Phase phase;
  phase.latency = topology.route_latency(src, dst);
  phase.flows.push_back({src, dst, 1.0});
  plan.phases.push_back(std::move(phase));
  plan.algorithm = Algorithm::direct;
  return plan;
}

TransferPlan plan_of_op(const Schedule& schedule, const Timeline& timeline, OpId id,
                        const Topology& topology) {
  const Op& op = schedule.ops[id];
  const TransferCall call = transfer_call(schedule, op, topology);
  if (is_host_copy(op)) return host_copy_plan(call.members[0], call.members[1], topology);
  if (op.kind != OpKind::collective)
    return plan_of_call(call, Algorithm::direct, Protocol::simple, topology);
  return plan_of_call(call, timeline.algorithm[id], timeline.protocol[id], topology);
}

bool plan_crosses(const TransferPlan& plan, const Topology& topology,
                  const std::vector<LinkId>& links) {
  for (const Phase& phase : plan.phases)
    for (const FlowSpec& flow : phase.flows) {
      if (flow.bytes_per_payload_byte <= 0.0) continue;
      for (const LinkId l : topology.route(flow.src, flow.dst))
        if (std::find(links.begin(), links.end(), l) != links.end()) return true;
    }
  return false;
}

}  // namespace clustersim::engine
