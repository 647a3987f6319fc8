// NCCL's all-to-all across nodes as a flow plan (docs/network.md "All-to-all across nodes").
//
// NCCL has no all-to-all algorithm: nccl-tests' alltoall_perf and the frameworks post one
// ncclSend and one ncclRecv of S/n to and from every rank inside a group, and NCCL runs them as
// point-to-point operations on its p2p channels (scheduleP2pTasksToPlan, src/enqueue.cc). A send
// to a GPU of another node does not leave through the sender's own NIC: with PXN (on by default
// since NCCL 2.12, NCCL_PXN_DISABLE=0) the sender writes the bytes over NVLink into the buffers of
// the local GPU attached to the NIC the peer receives on, and that GPU's proxy posts them to its
// NIC (ncclTopoComputePaths "PXN = PCI + NVLink", src/graph/paths.cc; ncclTopoGetNetDev and
// ncclTopoGetIntermediateRank, called from sendSetup in src/transport/net.cc). So every byte that
// crosses the network stays on one rail: NIC j of one node to NIC j of the other.
#include <cstddef>
#include <span>
#include <vector>

#include "engine/network/collective_parts.hpp"

namespace clustersim::engine::detail {

namespace {

// Whether a and b reach each other over NVLink alone (NCCL: path type PATH_NVL or better).
bool nvlink_only(const Topology& topology, EndpointId a, EndpointId b) {
  const auto route = topology.route(a, b);
  if (route.empty()) return false;
  for (LinkId l : route)
    if (topology.link(l).kind != LinkKind::nvlink) return false;
  return true;
}

// The GPU that puts `src`'s bytes for `dst` (the member at `dst_position` of its node) on the
// network: the member of src's node at the same position, whose NIC is the one dst receives on,
// when it has a NIC other than src's and NVLink to src (NCCL uses PXN only for a NIC that
// another NVLink-connected GPU reaches better, "Only use PXN for NIC n if remote GPU p ...",
// src/graph/paths.cc); otherwise src itself.
EndpointId pxn_relay(const Topology& topology, EndpointId src,
                     const std::vector<EndpointId>& src_node, std::size_t dst_position) {
  if (dst_position >= src_node.size()) return src;
  const EndpointId relay = src_node[dst_position];
  if (relay == src) return src;
  const VertexId relay_nic = topology.nic_of(relay);
  if (relay_nic == Topology::kNoVertex || relay_nic == topology.nic_of(src)) return src;
  return nvlink_only(topology, src, relay) ? relay : src;
}

}  // namespace

TransferPlan nccl_all_to_all(std::span<const EndpointId> members, const Topology& topology) {
  const auto groups = group_by_node(members, topology);
  const double share = 1.0 / static_cast<double>(members.size());
  FlowSet flows;
  for (const auto& src_node : groups) {
    for (EndpointId src : src_node) {
      for (const auto& dst_node : groups) {
        for (std::size_t p = 0; p < dst_node.size(); ++p) {
          const EndpointId dst = dst_node[p];
          if (&dst_node == &src_node) {
            flows.add(src, dst, share);  // NVLink (or PCIe) inside the node
            continue;
          }
          const EndpointId relay = pxn_relay(topology, src, src_node, p);
          flows.add(src, relay, share);  // the NVLink hop of PXN (none when relay == src)
          flows.add(relay, dst, share);  // rail-aligned across the network
        }
      }
    }
  }
  TransferPlan plan;
  add_phase(plan, topology, flows.take(), static_cast<std::int64_t>(members.size()) - 1);
  return plan;
}

}  // namespace clustersim::engine::detail
