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
#include <unordered_map>
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

// A GPU's index on its node: GPUs are numbered node-major (topology_builders.hpp), so it is how
// many GPUs of the same node come before it.
std::size_t local_index(const Topology& topology, EndpointId e) {
  std::size_t i = 0;
  while (e > i && topology.node_of(static_cast<EndpointId>(e - i - 1)) == topology.node_of(e))
    ++i;
  return i;
}

// The GPU that puts `src`'s bytes for a peer at local index `peer_index` of another node on the
// network: the member of src's node at that local index, whose NIC is on the rail of the peer's
// (NCCL picks the NIC the peer receives on, then the GPU attached to it), when it has a NIC other
// than src's and NVLink to src (NCCL uses PXN only for a NIC that another NVLink-connected GPU
// reaches better, "Only use PXN for NIC n if remote GPU p ...", src/graph/paths.cc); otherwise
// src itself. `by_index` maps local indices to the members of src's node.
EndpointId pxn_relay(const Topology& topology, EndpointId src,
                     const std::unordered_map<std::size_t, EndpointId>& by_index,
                     std::size_t peer_index) {
  const auto it = by_index.find(peer_index);
  if (it == by_index.end() || it->second == src) return src;
  const EndpointId relay = it->second;
  const VertexId relay_nic = topology.nic_of(relay);
  if (relay_nic == Topology::kNoVertex || relay_nic == topology.nic_of(src)) return src;
  return nvlink_only(topology, src, relay) ? relay : src;
}

}  // namespace

TransferPlan nccl_all_to_all(std::span<const EndpointId> members, const Topology& topology) {
  const auto groups = group_by_node(members, topology);
  std::vector<std::unordered_map<std::size_t, EndpointId>> by_index(groups.size());
  std::vector<std::vector<std::size_t>> index(groups.size());
  for (std::size_t k = 0; k < groups.size(); ++k) {
    for (EndpointId e : groups[k]) {
      index[k].push_back(local_index(topology, e));
      by_index[k].emplace(index[k].back(), e);
    }
  }
  const double share = 1.0 / static_cast<double>(members.size());
  FlowSet flows;
  for (std::size_t a = 0; a < groups.size(); ++a) {
    for (EndpointId src : groups[a]) {
      for (std::size_t b = 0; b < groups.size(); ++b) {
        for (std::size_t p = 0; p < groups[b].size(); ++p) {
          const EndpointId dst = groups[b][p];
          if (a == b) {
            flows.add(src, dst, share);  // NVLink (or PCIe) inside the node
            continue;
          }
          const EndpointId relay = pxn_relay(topology, src, by_index[a], index[b][p]);
          flows.add(src, relay, share);  // the NVLink hop of PXN (none when relay == src)
          flows.add(relay, dst, share);  // on the peer's rail across the network
        }
      }
    }
  }
  TransferPlan plan;
  add_phase(plan, topology, flows.take(), static_cast<std::int64_t>(members.size()) - 1);
  return plan;
}

}  // namespace clustersim::engine::detail
