// NCCL's all-to-all as a flow plan (docs/network.md "All-to-all across nodes", "All-to-all:
// send/receive parts").
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
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <unordered_map>
#include <vector>

#include "engine/network/collective_parts.hpp"
#include "engine/network/nccl_tuning.hpp"

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

// The bandwidth of the NIC that `e` leaves its node through towards `other` (another node's
// member), in GB/s: the link the route takes out of the NIC.
double nic_gbps(EndpointId e, EndpointId other, const Topology& topology) {
  for (LinkId l : topology.route(e, other)) {
    const LinkInfo& link = topology.link(l);
    if (topology.vertex(link.src).kind == VertexKind::nic)
      return link.bandwidth.bytes_per_second() / 1e9;
  }
  return 0.0;
}

double pow2_up(double x) {
  return static_cast<double>(std::bit_ceil(static_cast<unsigned>(std::max(1.0, x))));
}

// How NCCL cuts the group's sends into parts (NCCL at 5067397c): p2pChunkSize (src/init.cc:
// NCCL_P2P_NVL_CHUNKSIZE 512 KiB inside an all-NVLink node, NCCL_P2P_NET_CHUNKSIZE 128 KiB across
// nodes, NCCL_P2P_PCI_CHUNKSIZE 128 KiB over PCIe); the channels a peer may take, 2 per NVLink of
// the path to a local peer (NCCL counts links as path bandwidth / 20 GB/s), 2 over PCIe, and for
// a peer on another node one per NIC or one per 14 GB/s of it (NCCL_P2P_PER_CHANNEL_NET_BW), the
// least over the peers, a power of two (ncclTopoGetNchannels, ncclTopoComputeP2pChannels,
// src/graph/paths.cc); the p2p channels, the communicator's own rounded up to a power of two;
// and scheduleP2pTasksToPlan's nChannelsMin, halved until every rank's sends fit the channels
// (src/enqueue.cc).
Pipeline::SendRecvParts send_recv_parts(std::span<const EndpointId> members,
                                        const std::vector<std::vector<EndpointId>>& groups,
                                        const Topology& topology) {
  Pipeline::SendRecvParts parts;
  const double n = static_cast<double>(members.size());
  const bool across = groups.size() > 1;
  const EndpointId self = groups[0][0];
  const bool local_peer = groups[0].size() > 1;
  const bool local_nvlink = local_peer && nvlink_only(topology, self, groups[0][1]);
  double per_peer = std::numeric_limits<double>::infinity();
  if (local_peer) {
    const double links = std::max(
        1.0, std::floor(topology.route_bandwidth(self, groups[0][1]).bytes_per_second() / 20e9));
    per_peer = local_nvlink ? 2.0 * links : 2.0;
  }
  if (across) {
    const double nic = nic_gbps(self, groups[1][0], topology);
    per_peer = std::min(per_peer, std::max(1.0, std::ceil(nic / 14.0)));
  }
  if (!std::isfinite(per_peer)) per_peer = 2.0;
  per_peer = pow2_up(per_peer);
  const double channels =
      pow2_up(std::min(64.0, static_cast<double>(collective_channels(members, topology))));
  if (across) {
    while (per_peer * std::ceil(n / 8.0) > channels && per_peer > 1.0)
      per_peer /= 2.0;
  } else {
    per_peer = std::min(channels, per_peer);
  }
  double channels_min = per_peer;
  while (channels_min * n > channels && channels_min > 1.0)
    channels_min /= 2.0;
  parts.on = true;
  parts.ranks = n;
  parts.chunk = !across && local_nvlink ? 524288.0 : 131072.0;
  parts.channels_min = channels_min;
  parts.channels_max = per_peer;
  parts.min_part = across ? parts.chunk / 2.0 : parts.chunk / 8.0;
  parts.max_part = across ? parts.chunk : parts.chunk * 32.0;
  parts.channel_rate = nccl::kP2pChannelGBps * 1e9;
  parts.p2p_channels = channels;
  return parts;
}

// The members of a communicator by node: which node group each is in, its local index there,
// and each node's members by local index (for PXN relays).
struct CommNodes {
  std::vector<std::vector<EndpointId>> groups;
  std::vector<std::unordered_map<std::size_t, EndpointId>> by_index;
  std::unordered_map<EndpointId, std::pair<std::size_t, std::size_t>> where;  // (group, index)

  CommNodes(std::span<const EndpointId> members, const Topology& topology)
      : groups(group_by_node(members, topology)), by_index(groups.size()) {
    for (std::size_t k = 0; k < groups.size(); ++k) {
      for (EndpointId e : groups[k]) {
        const std::size_t i = local_index(topology, e);
        by_index[k].emplace(i, e);
        where.emplace(e, std::make_pair(k, i));
      }
    }
  }
  // One send of `share` per payload byte from src to dst: over NVLink (or PCIe) inside a node;
  // across nodes through the local GPU on the receiver's rail where PXN relays it.
  void add_send(FlowSet& flows, EndpointId src, EndpointId dst, double share,
                const Topology& topology) const {
    const std::size_t a = where.at(src).first;
    const auto [b, j] = where.at(dst);
    if (a == b) {
      flows.add(src, dst, share);
      return;
    }
    const EndpointId relay = pxn_relay(topology, src, by_index[a], j);
    flows.add(src, relay, share);  // the NVLink hop of PXN (none when relay == src)
    flows.add(relay, dst, share);  // on the peer's rail across the network
  }
};

// One phase of sends in parts: its flows, NCCL's parts for `comm`, each send `1 / ranks` of the
// payload, and `steps` latencies.
TransferPlan parts_plan(Flows flows, std::span<const EndpointId> comm, const CommNodes& nodes,
                        double ranks, std::int64_t steps, const Topology& topology) {
  Pipeline::SendRecvParts parts = send_recv_parts(comm, nodes.groups, topology);
  parts.ranks = ranks;
  parts.seconds_per_byte = bottleneck(flows, topology);
  TransferPlan plan;
  add_phase(plan, topology, std::move(flows), steps);
  if (!plan.phases.empty()) plan.phases.back().pipeline.send_recv = parts;
  return plan;
}

}  // namespace

TransferPlan nccl_all_to_all(std::span<const EndpointId> members, const Topology& topology) {
  const CommNodes nodes(members, topology);
  const double share = 1.0 / static_cast<double>(members.size());
  FlowSet flows;
  for (const auto& from : nodes.groups)
    for (EndpointId src : from)
      for (const auto& to : nodes.groups)
        for (EndpointId dst : to)
          if (src != dst) nodes.add_send(flows, src, dst, share, topology);
  return parts_plan(flows.take(), members, nodes, static_cast<double>(members.size()),
                    static_cast<std::int64_t>(members.size()) - 1, topology);
}

TransferPlan nccl_sends(std::span<const EndpointId> comm,
                        std::span<const std::pair<EndpointId, EndpointId>> sends,
                        const Topology& topology) {
  const CommNodes nodes(comm, topology);
  FlowSet flows;
  for (const auto& [src, dst] : sends)
    nodes.add_send(flows, src, dst, 1.0, topology);
  return parts_plan(flows.take(), comm, nodes, 1.0, 1, topology);
}

}  // namespace clustersim::engine::detail
