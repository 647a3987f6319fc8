// How many channels NCCL runs a collective on (docs/network.md "Channels"): its topology search's
// outcome as a rule of the group's shape, the GPUs' paths to their NICs and the GPU generation.
#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <vector>

#include "engine/network/collective_parts.hpp"
#include "engine/network/collectives.hpp"

namespace clustersim::engine {

namespace detail {

bool nvlink_inside(const std::vector<std::vector<EndpointId>>& groups, const Topology& topology) {
  for (const auto& g : groups) {
    if (g.size() < 2) continue;
    for (LinkId l : topology.route(g[0], g[1]))
      if (topology.link(l).kind == LinkKind::nvlink) return true;
    return false;
  }
  return topology.collective_hardware().nvls;  // one GPU per node: take the node's kind
}

int rails_of(const std::vector<EndpointId>& node_members, const Topology& topology) {
  std::vector<VertexId> nics;
  for (EndpointId e : node_members) {
    const VertexId nic = topology.nic_of(e);
    if (nic != Topology::kNoVertex && std::find(nics.begin(), nics.end(), nic) == nics.end())
      nics.push_back(nic);
  }
  return std::max<int>(1, static_cast<int>(nics.size()));
}

}  // namespace detail

using namespace detail;

namespace {

// The narrowest link from GPU `e` out of its node, the NIC's own cable included (its PCIe path
// to the NIC and the NIC): what NCCL's search sees of a GPU's way to the network (it knows
// nothing of the fabric beyond), in GB/s. `other` is a member on another node.
double path_to_network_gbps(EndpointId e, EndpointId other, const Topology& topology) {
  double bw = std::numeric_limits<double>::infinity();
  for (LinkId l : topology.route(e, other)) {
    const LinkInfo& link = topology.link(l);
    bw = std::min(bw, link.bandwidth.bytes_per_second());
    if (topology.vertex(link.src).kind == VertexKind::nic) break;
  }
  return bw / 1e9;
}

// One member per node (NCCL's search with ngpus = 1): it looks for rings at the fastest speed of
// the GPU generation's inter-node speed list that the GPU's path to its NIC carries
// (speedArrayInter, sm90SpeedArrayInter, sm100SpeedArrayInter in src/graph/search.cc), one
// channel per NIC, and doubles them when that speed is at least 25 GB/s (ncclTopoDupChannels;
// not on Hopper and later below 50 GB/s with more than 4 channels). A100 (PCIe gen 4: 24) gets 1
// channel a NIC, H100 and B200 on 400 Gb/s NICs 2, H100 on 200 Gb/s NICs 1.
int one_per_node_channels(int rails, double path_gbps, int gpu_arch) {
  static constexpr double kSm80[] = {48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0,
                                     7.0,  6.0,  5.0,  4.0,  3.0,  2.4,  1.2,  0.24, 0.12};
  static constexpr double kSm90[] = {48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                     15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
  static constexpr double kSm100[] = {96.0, 86.0, 80.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0,
                                      20.0, 17.5, 15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
  const std::span<const double> speeds = gpu_arch >= 100  ? std::span<const double>(kSm100)
                                         : gpu_arch >= 90 ? std::span<const double>(kSm90)
                                                          : std::span<const double>(kSm80);
  double speed = speeds.back();
  for (double s : speeds)
    if (s <= path_gbps) {
      speed = s;
      break;
    }
  const bool dup = speed >= 25.0 && !(gpu_arch > 80 && speed < 50.0 && rails > 4);
  return dup ? 2 * rails : rails;
}

int rule_channels(std::span<const EndpointId> members, const Topology& topology) {
  const auto groups = group_by_node(members, topology);
  if (groups.size() > 1) {
    const int rails = rails_of(groups.front(), topology);
    // With a NIC to look at (hand-built graphs may have none): NCCL's search for one GPU.
    bool one_per_node = topology.nic_of(groups[0][0]) != Topology::kNoVertex;
    for (const auto& g : groups)
      one_per_node = one_per_node && g.size() == 1;
    if (one_per_node)
      return std::min(32, one_per_node_channels(
                              rails, path_to_network_gbps(groups[0][0], groups[1][0], topology),
                              topology.collective_hardware().gpu_arch));
    return std::min(32, nvlink_inside(groups, topology) ? 2 * rails : rails);
  }
  const bool nvlink = nvlink_inside(groups, topology);
  if (!nvlink) return 2;
  const double gbps = topology.route_bandwidth(members[0], members[1]).bytes_per_second() / 1e9;
  return std::clamp(static_cast<int>(std::lround(gbps / 20.0)), 2, 32);
}

}  // namespace

// NCCL's channel rule from the topology, or the scenario's count (docs/network.md "Channels").
int collective_channels(std::span<const EndpointId> members, const Topology& topology) {
  const auto& hw = topology.collective_hardware();
  if (members.size() < 2) return 1;
  const int channels = hw.channels > 0 ? hw.channels : rule_channels(members, topology);
  return std::max(channels, hw.min_ctas);  // NCCL_MIN_CTAS raises every count to its floor
}

}  // namespace clustersim::engine
