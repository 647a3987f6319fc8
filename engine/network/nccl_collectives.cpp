// NCCL's collectives as flow plans (docs/network.md "Channels", "Trees", "NVLS", "Protocols and
// the tuner"): C channels rail-aligned across the NICs, double binary trees across nodes with a
// chain inside each node, NVLS and CollNet reductions, the LL / LL128 / Simple protocols with
// NCCL's published constants (nccl_tuning.hpp), and the tuner that estimates every algorithm ×
// protocol and takes the fastest.
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/network/collective_parts.hpp"
#include "engine/network/collectives.hpp"
#include "engine/network/nccl_tuning.hpp"

namespace clustersim::engine {

namespace detail {

// Seconds per payload byte of the phase without contention: the most loaded link (optionally
// NVLink links only).
double bottleneck(const Flows& flows, const Topology& topology, bool nvlink_only) {
  std::unordered_map<LinkId, double> load;
  for (const FlowSpec& f : flows)
    for (LinkId l : topology.route(f.src, f.dst))
      load[l] += f.bytes_per_payload_byte;
  double worst = 0.0;
  for (const auto& [l, bytes] : load) {
    const LinkInfo& info = topology.link(l);
    if (nvlink_only && info.kind != LinkKind::nvlink) continue;
    worst = std::max(worst, bytes / info.bandwidth.bytes_per_second());
  }
  return worst;
}

namespace {

// ---- NCCL-style algorithms: channels, node-aware trees, NVLS, CollNet (docs/network.md) ----

bool uniform(const std::vector<std::vector<EndpointId>>& groups) {
  for (const auto& g : groups)
    if (g.size() != groups.front().size()) return false;
  return true;
}

std::size_t entry_index(std::size_t c, std::size_t channels, std::size_t m) {
  return (c * m / channels) % m;
}

// C ring channels across nodes, each carrying 1/C of `per_edge` on every ring edge. Channel c
// enters the first node at the member spread to c and walks the node's members in group order;
// the next node is entered at the local index the previous node was left from, so each
// node-to-node hop stays on one rail (GPU i's NIC to GPU i's NIC); only the hop closing the ring
// may cross rails. One node: the plain ring over the members.
void add_channel_rings(FlowSet& flows, const std::vector<std::vector<EndpointId>>& groups,
                       std::size_t channels, double per_edge) {
  if (groups.size() == 1) {
    const auto& ring = groups.front();
    for (std::size_t i = 0; ring.size() > 1 && i < ring.size(); ++i)
      flows.add(ring[i], ring[(i + 1) % ring.size()], per_edge);
    return;
  }
  const double share = per_edge / static_cast<double>(channels);
  for (std::size_t c = 0; c < channels; ++c) {
    std::size_t local = entry_index(c, channels, groups.front().size());
    EndpointId first = 0;
    EndpointId exit = 0;
    for (std::size_t j = 0; j < groups.size(); ++j) {
      const auto& node = groups[j];
      const std::size_t mj = node.size();
      const std::size_t e = local % mj;
      if (j == 0)
        first = node[e];
      else
        flows.add(exit, node[e], share);
      for (std::size_t i = 0; i + 1 < mj; ++i)
        flows.add(node[(e + i) % mj], node[(e + i + 1) % mj], share);
      local = (e + mj - 1) % mj;
      exit = node[local];
    }
    flows.add(exit, first, share);
  }
}

// NCCL's trees: a double binary tree over nodes, a chain inside each node from the channel's head
// GPU (the same local index on every node, so tree edges between nodes stay on one rail). Each of
// the C channels runs both trees, each tree on half its share; reduce up and broadcast down are
// pipelined, so every tree edge carries `bytes`/(2C) each way.
void add_channel_trees(FlowSet& flows, const std::vector<std::vector<EndpointId>>& groups,
                       std::size_t channels, double bytes) {
  const std::size_t nn = groups.size();
  const double s = bytes / (2.0 * static_cast<double>(channels));
  std::vector<EndpointId> head(nn);
  for (std::size_t c = 0; c < channels; ++c) {
    for (std::size_t j = 0; j < nn; ++j) {
      const auto& node = groups[j];
      const std::size_t mj = node.size();
      const std::size_t h = entry_index(c, channels, groups.front().size()) % mj;
      head[j] = node[h];
      for (std::size_t i = 0; i + 1 < mj; ++i) {
        const EndpointId a = node[(h + i) % mj];
        const EndpointId b = node[(h + i + 1) % mj];
        flows.add(a, b, 2.0 * s);  // both trees use the chain
        flows.add(b, a, 2.0 * s);
      }
    }
    for (std::size_t j = 0; j < nn; ++j) {
      for (int tree = 0; tree < 2; ++tree) {
        const std::size_t p = tree == 0 ? btree_parent(nn, j) : dtree_second_parent(nn, j);
        if (p == nn) continue;
        flows.add(head[j], head[p], s);
        flows.add(head[p], head[j], s);
      }
    }
  }
}

// NVLS on one node: the switch reduces (multimem loads) and multicasts (multimem stores), so every
// GPU's link carries S·(g+1)/g each way (NVLS reduce-scatter + all-gather; sjeaugey, nccl-tests
// #212: "algbw = busbw·n/(n+1)"). Unicast flows i -> j of (g+1)/(g(g−1)) put that load on each
// link.
void add_nvls_node(FlowSet& flows, const std::vector<EndpointId>& node, double scale) {
  const double g = static_cast<double>(node.size());
  if (node.size() < 2) return;
  const double b = scale * (g + 1.0) / (g * (g - 1.0));
  for (EndpointId a : node)
    for (EndpointId c : node)
      flows.add(a, c, b);
}

std::int64_t log2i(std::size_t n) {
  return nccl::log2i(n);
}

struct Shape {
  std::vector<std::vector<EndpointId>> groups;
  std::size_t n = 0;      // ranks
  std::size_t nodes = 0;  // N
  std::size_t ppn = 0;    // members on the first node
  bool nvlink = false;
  int channels = 1;
  // NVLS channels: NCCL's per-architecture count, at least NCCL_MIN_CTAS (src/transport/nvls.cc
  // clamps nvlsChannels to [minCTAs, maxCTAs], v2.19.3 on).
  int nvls_channels = 16;
};

Shape shape_of(std::span<const EndpointId> m, const Topology& topology) {
  Shape s;
  s.groups = group_by_node(m, topology);
  s.n = m.size();
  s.nodes = s.groups.size();
  s.ppn = s.groups.front().size();
  s.nvlink = nvlink_inside(s.groups, topology);
  s.channels = collective_channels(m, topology);
  const auto& hw = topology.collective_hardware();
  s.nvls_channels =
      std::max(nccl::nvls_channels(hw.gpu_arch, static_cast<int>(s.nodes)), hw.min_ctas);
  return s;
}

bool nccl_algorithm(Algorithm a) {
  return a == Algorithm::ring || a == Algorithm::tree || a == Algorithm::nvls ||
         a == Algorithm::collnet;
}
bool nccl_collective(CollectiveType t) {
  return t == CollectiveType::all_reduce || t == CollectiveType::all_gather ||
         t == CollectiveType::reduce_scatter;
}

nccl::Row row_of(Algorithm a, std::size_t nodes) {
  switch (a) {
    case Algorithm::tree:
      return nccl::Row::tree;
    case Algorithm::nvls:
      return nodes > 1 ? nccl::Row::nvls_tree : nccl::Row::nvls;
    case Algorithm::collnet:
      return nccl::Row::collnet_direct;
    default:
      return nccl::Row::ring;
  }
}

// The flows of an NCCL algorithm, Simple protocol (one pipelined phase).
Flows nccl_flows(CollectiveType type, Algorithm a, const Shape& sh) {
  FlowSet flows;
  const double dn = static_cast<double>(sh.n);
  const auto channels = static_cast<std::size_t>(sh.channels);
  switch (a) {
    case Algorithm::ring:
      add_channel_rings(flows, sh.groups, channels,
                        (type == CollectiveType::all_reduce ? 2.0 : 1.0) * (dn - 1.0) / dn);
      break;
    case Algorithm::tree:
      add_channel_trees(flows, sh.groups, channels, 1.0);
      break;
    case Algorithm::nvls: {
      // NVLS inside every node; across nodes (NVLSTree) each GPU's S/g shard goes up and down a
      // double binary tree over the nodes among the GPUs of its local index, pipelined.
      for (const auto& node : sh.groups)
        add_nvls_node(flows, node, 1.0);
      if (sh.nodes > 1) {
        const double g = static_cast<double>(sh.ppn);
        for (std::size_t k = 0; k < sh.ppn; ++k) {
          std::vector<std::vector<EndpointId>> column;
          for (const auto& node : sh.groups)
            column.push_back({node[k]});
          add_channel_trees(flows, column, 1, 1.0 / g);
        }
      }
      break;
    }
    case Algorithm::collnet: {
      // CollNet (SHARP): reduce-scatter inside the node, each GPU's S/g shard up to the switches
      // and the reduced shard back (S/g each way per NIC, whatever the node count), all-gather
      // inside the node; pipelined. The in-network part is drawn as a ring per local index with
      // S/g per edge, which loads every NIC and the fabric with S/g each way.
      const double g = static_cast<double>(sh.ppn);
      for (const auto& node : sh.groups)
        for (std::size_t i = 0; node.size() > 1 && i < node.size(); ++i)
          flows.add(node[i], node[(i + 1) % node.size()], 2.0 * (g - 1.0) / g);
      for (std::size_t k = 0; k < sh.ppn; ++k)
        for (std::size_t j = 0; j < sh.nodes; ++j)
          flows.add(sh.groups[j][k], sh.groups[(j + 1) % sh.nodes][k], 1.0 / g);
      break;
    }
    default:
      break;
  }
  return flows.take();
}

// Bytes on the wire per payload byte: LL moves 8 data bytes per 16-byte line, LL128 120 per 128.
double wire_factor(Protocol p) {
  switch (p) {
    case Protocol::ll:
      return 2.0;
    case Protocol::ll128:
      return 128.0 / 120.0;
    case Protocol::simple:
      return 1.0;
  }
  return 1.0;
}

// NCCL's latency model (NCCL_TUNING.md §5) in µs. Per-hop figures never go below the topology's
// own route latency for that hop.
double nccl_latency_us(CollectiveType type, Algorithm a, Protocol p, const Shape& sh,
                       const Flows& flows, const Topology& topology) {
  double route_intra = 0.0;
  double route_inter = 0.0;
  for (const FlowSpec& f : flows) {
    const double us = topology.route_latency(f.src, f.dst).seconds() * 1e6;
    double& r = topology.node_of(f.src) == topology.node_of(f.dst) ? route_intra : route_inter;
    r = std::max(r, us);
  }
  const nccl::Row row = row_of(a, sh.nodes);
  const nccl::Hw intra_hw = sh.nvlink ? nccl::Hw::nvlink : nccl::Hw::pci;
  const double nic = topology.collective_hardware().nic_latency_us;
  double intra = std::max(nccl::hw_latency(intra_hw, row, p), route_intra);
  const double inter_row = sh.ppn == 1 && a == Algorithm::ring
                               ? nccl::hw_latency(nccl::Hw::net, nccl::Row::tree, p)
                               : nccl::hw_latency(nccl::Hw::net, row, p);
  const double inter = std::max(inter_row + nic + (p == Protocol::simple ? nic : 0.0), route_inter);
  double lat = nccl::base_latency(row, p);
  const auto n = static_cast<double>(sh.n);
  const auto nodes = static_cast<double>(sh.nodes);
  const auto ppn = static_cast<double>(sh.ppn);
  const bool ar = type == CollectiveType::all_reduce;
  switch (a) {
    case Algorithm::ring: {
      const double steps = (ar ? 2.0 : 1.0) * (n - 1.0);
      const double inter_steps = sh.nodes == 1 ? 0.0 : (ar ? 2.0 : 1.0) * (nodes - 1.0);
      if (sh.nodes > 1)
        intra = std::max(intra, nccl::net_overhead_us(topology.collective_hardware().amd_cpu) *
                                    (p == Protocol::simple ? 3.0 : 1.0));
      lat += (steps - inter_steps) * intra + inter_steps * inter;
      break;
    }
    case Algorithm::tree:
      lat += 2.0 * ((ppn - 1.0) * intra +
                    static_cast<double>(log2i(sh.nodes)) * (sh.nodes > 1 ? inter : 0.0));
      break;
    case Algorithm::nvls:
      lat = intra + (sh.nodes > 1 ? 2.0 * static_cast<double>(log2i(sh.nodes)) * inter : 0.0);
      break;
    case Algorithm::collnet:
      lat += 2.0 * (std::min(1.0, ppn - 1.0) * intra + (ppn - 1.0) * 0.4) + inter;
      break;
    default:
      break;
  }
  return lat;
}

// Whether a rate is the tuner's estimate or the rate the hardware runs at (nccl_rate_cap).
enum class RateAs { tuner, run };

// The highest payload rate (bytes/s) NCCL's per-channel and per-algorithm limits allow
// (NCCL_TUNING.md §4); 0 = none. `link_rate` is the plan's uncontended Simple rate. `as` says
// whether the rate is the tuner's estimate (which picks the algorithm, as NCCL picks it) or what
// the hardware runs at (the plan's cap); they differ for NVLSTree only (kNvlsTreeNvlinkShare).
double nccl_rate_cap(CollectiveType type, Algorithm a, Protocol p, const Shape& sh,
                     double link_rate, double nvlink_rate, const Topology& topology, RateAs as) {
  const int arch = topology.collective_hardware().gpu_arch;
  const bool amd = topology.collective_hardware().amd_cpu;
  const int nodes = static_cast<int>(sh.nodes);
  const double busf = bus_bandwidth_factor(type, sh.n);
  const double ch = sh.channels;
  const auto busbw = [&](double gbps) { return gbps * 1e9 / busf; };
  double cap = std::numeric_limits<double>::infinity();
  switch (a) {
    case Algorithm::ring:
      if (p == Protocol::ll) cap = busbw(nccl::ll_max_bw(arch, nodes, amd));
      // Across nodes each channel's network connection moves at most kNetChannelGBps of wire
      // bytes (nccl_tuning.hpp): busbw <= C × that × the protocol's data share of a line.
      if (nodes > 1 && p != Protocol::ll128)
        cap = std::min(cap, busbw(ch * nccl::kNetChannelGBps / wire_factor(p)));
      // An LL128 ring runs at NCCL's kRingLL128Share of the Simple ring's rate (its link rate,
      // across nodes at most its channels' network limit), below the line's 120/128, and at most
      // C × perChMaxRingLL128 (ncclTopoTuneModel), on one node as across nodes.
      if (p == Protocol::ll128) {
        double simple = link_rate > 0.0 ? link_rate : std::numeric_limits<double>::infinity();
        if (nodes > 1) simple = std::min(simple, busbw(ch * nccl::kNetChannelGBps));
        cap = std::min(nccl::kRingLL128Share * simple,
                       busbw(ch * nccl::per_channel(nccl::kPerChMaxRingLL128, arch, nodes)));
      }
      break;
    case Algorithm::tree:
      // NCCL rates a tree at the same per-channel network bandwidth as the ring (nCh × bwInter),
      // not at the tree's lighter NIC load on two nodes: `link_rate` is the ring's here, and so is
      // the limit of its channels' network connections (Simple's, as the ring's rate).
      if (nodes > 1) link_rate = std::min(link_rate, busbw(ch * nccl::kNetChannelGBps));
      if (p == Protocol::simple)
        cap = std::min(0.92 * link_rate,
                       busbw(ch * nccl::per_channel(nccl::kPerChMaxTree, arch, nodes)));
      if (p == Protocol::ll)
        cap = std::min(link_rate / 3.8, busbw(nccl::ll_max_bw(arch, nodes, amd)));
      if (p == Protocol::ll128)
        cap = std::min(link_rate * (nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
                       busbw(ch * nccl::per_channel(nccl::kPerChMaxTreeLL128, arch, nodes)));
      break;
    case Algorithm::nvls:
      cap = nccl::nvls_efficiency(arch) * nvlink_rate;
      if (nodes > 1 && as == RateAs::run) cap *= nccl::kNvlsTreeNvlinkShare;
      if (nodes > 1)
        cap = std::min(
            cap, busbw(sh.nvls_channels * nccl::per_channel(nccl::kPerChMaxNvlsTree, arch, nodes)));
      break;
    default:
      break;
  }
  return std::isfinite(cap) ? cap : 0.0;
}

// The most loaded link of a plan per payload byte (Simple): `link` against which its caps are
// set (the ring's for a tree), `nvl` over NVLink only (NVLS), `own` over its own flows.
struct Loads {
  double link = 0.0;
  double nvl = 0.0;
  double own = 0.0;
};
Loads loads_of(CollectiveType type, Algorithm a, const Shape& sh, const Flows& flows,
               const Topology& topology) {
  Loads l;
  l.own = bottleneck(flows, topology);
  l.link = a == Algorithm::tree
               ? std::max(l.own, bottleneck(nccl_flows(type, Algorithm::ring, sh), topology))
               : l.own;
  l.nvl = a == Algorithm::nvls ? bottleneck(flows, topology, true) : l.link;
  return l;
}

// The uncontended seconds per payload byte of `a` with `p`: the most loaded link's wire bytes,
// or the rate cap when that is tighter. `cap` receives the cap (0 = none).
double seconds_per_byte(CollectiveType type, Algorithm a, Protocol p, const Shape& sh,
                        const Loads& l, const Topology& topology, RateAs as, double& cap) {
  cap = nccl_rate_cap(type, a, p, sh, l.link > 0 ? 1.0 / l.link : 0.0,
                      l.nvl > 0 ? 1.0 / l.nvl : 0.0, topology, as);
  double per_byte = l.link * wire_factor(p);
  if (cap > 0.0) per_byte = std::max(per_byte, 1.0 / cap);
  return per_byte;
}

// NCCL's chunked pipeline for this plan, filled at the plan's uncontended rate.
// `per_byte` is the plan's own link time per payload byte (the fill's stage rate); a ring's step
// floor is set against its latency term `latency_s` and its uncontended rate `capped_per_byte`.
Pipeline nccl_pipeline(CollectiveType type, Algorithm a, Protocol p, const Shape& sh,
                       const Topology& topology, double per_byte, double capped_per_byte,
                       double latency_s) {
  const double n = static_cast<double>(sh.n);
  const nccl::PipelineShape ps{sh.nodes,
                               sh.ppn,
                               static_cast<double>(sh.channels),
                               topology.collective_hardware().gpu_arch,
                               sh.n,
                               (type == CollectiveType::all_reduce ? 2.0 : 1.0) * (n - 1.0),
                               static_cast<double>(rails_of(sh.groups.front(), topology)),
                               static_cast<double>(sh.nvls_channels)};
  Pipeline pl = nccl::pipeline_of(row_of(a, sh.nodes), p, ps);
  pl.seconds_per_byte = per_byte;
  if (pl.step_floor.on) {
    pl.step_floor.base = nccl::base_latency(nccl::Row::ring, p) * 1e-6;
    pl.step_floor.latency = latency_s;
    pl.step_floor.seconds_per_byte = capped_per_byte;
  }
  return pl;
}

TransferPlan nccl_plan(CollectiveType type, Algorithm a, Protocol p, const Shape& sh, Flows flows,
                       const Topology& topology) {
  Phase phase;
  phase.latency = Time::from_seconds(nccl_latency_us(type, a, p, sh, flows, topology) * 1e-6);
  const Loads l = loads_of(type, a, sh, flows, topology);
  const double capped = seconds_per_byte(type, a, p, sh, l, topology, RateAs::run, phase.rate_cap);
  // A chunk crosses each stage at the link rate of the plan's own flows, not at its end-to-end
  // cap (LL's llMaxBw, for one, limits the whole collective, not one hop). NVLS is the exception:
  // its cap is the rate at which the NVLS warps move a chunk through the switch (nvlsEfficiency,
  // and NVLSTree's NVLink share), so where it binds, every stage of a chunk crosses at it.
  const double stage_per_byte = a == Algorithm::nvls ? capped : l.own * wire_factor(p);
  phase.pipeline =
      nccl_pipeline(type, a, p, sh, topology, stage_per_byte, capped, phase.latency.seconds());
  for (FlowSpec& f : flows)
    f.bytes_per_payload_byte *= wire_factor(p);
  phase.flows = std::move(flows);
  if (a == Algorithm::ring)  // the ring's steps, as in its latency: 2(n−1) all-reduce, else n−1
    phase.steps =
        static_cast<std::uint32_t>((type == CollectiveType::all_reduce ? 2 : 1) * (sh.n - 1));
  TransferPlan plan;
  plan.phases.push_back(std::move(phase));
  plan.protocol = p;
  plan.channels = static_cast<std::uint16_t>(a == Algorithm::nvls ? sh.nvls_channels : sh.channels);
  return plan;
}

void check_nccl(CollectiveType type, Algorithm a, Protocol p, const Shape& sh,
                const Topology& topology) {
  const auto& hw = topology.collective_hardware();
  if (a == Algorithm::tree && type != CollectiveType::all_reduce)
    unsupported(type, a, "tree supports all_reduce only");
  if ((a == Algorithm::nvls || a == Algorithm::collnet) && type != CollectiveType::all_reduce)
    unsupported(type, a, "nvls and collnet support all_reduce only");
  if (a == Algorithm::nvls && !(hw.nvls && uniform(sh.groups) && sh.ppn > 1))
    throw std::invalid_argument(
        "nvls all_reduce needs NVSwitch gen 3+ nodes (H100/H200/B200) and the same number (>1) "
        "of group members on every node; use ring or tree");
  if (a == Algorithm::collnet && !(hw.sharp && sh.nodes > 1 && uniform(sh.groups)))
    throw std::invalid_argument(
        "collnet all_reduce needs a SHARP fabric (cluster.network.sharp: true), a group across "
        "nodes and the same number of members on every node; use ring or tree");
  if ((a == Algorithm::nvls || a == Algorithm::collnet) && p != Protocol::simple)
    throw std::invalid_argument(std::string(to_string(a)) + " runs the Simple protocol only");
}

// Whether NCCL would enable LL128 here: NVLink inside the node (typeIntra <= PATH_NVB), Volta or
// newer (NCCL_TUNING.md §4.6).
bool ll128_enabled(const Shape& sh, const Topology& topology) {
  return sh.nvlink && topology.collective_hardware().gpu_arch >= 70;
}

}  // namespace

bool nccl_pair(CollectiveType type, Algorithm algorithm) {
  return nccl_algorithm(algorithm) && nccl_collective(type);
}

TransferPlan nccl_transfer_plan(CollectiveType type, Algorithm algorithm,
                                std::span<const EndpointId> members, const Topology& topology,
                                Protocol protocol) {
  const Shape sh = shape_of(members, topology);
  check_nccl(type, algorithm, protocol, sh, topology);
  return nccl_plan(type, algorithm, protocol, sh, nccl_flows(type, algorithm, sh), topology);
}

}  // namespace detail

using namespace detail;

CollectiveChoice choose_collective(CollectiveType type, double payload_bytes,
                                   std::span<const EndpointId> members, const Topology& topology,
                                   Algorithm forced) {
  CollectiveChoice best;
  if (!nccl_collective(type) || members.size() < 2 ||
      (forced != Algorithm::automatic && !nccl_algorithm(forced))) {
    best.algorithm = forced != Algorithm::automatic       ? forced
                     : type == CollectiveType::all_to_all ? Algorithm::direct
                                                          : Algorithm::ring;
    return best;
  }
  const Shape sh = shape_of(members, topology);
  const auto& hw = topology.collective_hardware();
  std::vector<Algorithm> candidates;
  if (forced != Algorithm::automatic) {
    candidates.push_back(forced);
  } else {
    candidates.push_back(Algorithm::ring);
    if (type == CollectiveType::all_reduce) {
      candidates.push_back(Algorithm::tree);
      if (hw.nvls && uniform(sh.groups) && sh.ppn > 1) candidates.push_back(Algorithm::nvls);
      if (hw.sharp && sh.nodes > 1 && uniform(sh.groups)) candidates.push_back(Algorithm::collnet);
    }
  }
  best.estimate_s = std::numeric_limits<double>::infinity();
  for (Algorithm a : candidates) {
    const Flows flows = nccl_flows(type, a, sh);
    const Loads l = loads_of(type, a, sh, flows, topology);
    for (Protocol p : {Protocol::ll, Protocol::ll128, Protocol::simple}) {
      const bool simple_only = a == Algorithm::nvls || a == Algorithm::collnet;
      if (simple_only && p != Protocol::simple) continue;
      if (p == Protocol::ll128 && !ll128_enabled(sh, topology)) continue;
      double cap = 0.0;
      const double per_byte = seconds_per_byte(type, a, p, sh, l, topology, RateAs::tuner, cap);
      // NCCL's ncclTopoGetAlgoTime: no pipeline fill, but its tree correction by size and the
      // ring's "plateau" latency factor.
      double lat = nccl_latency_us(type, a, p, sh, flows, topology) * 1e-6;
      if (a == Algorithm::ring && p == Protocol::simple && sh.nodes > 1 &&
          type == CollectiveType::all_reduce &&
          payload_bytes / (static_cast<double>(sh.channels) * static_cast<double>(sh.n)) >= 64.0)
        lat *= hw.gpu_arch < 80 ? 1.9 : 1.4;
      double eff = 1.0;
      if (a == Algorithm::tree && type == CollectiveType::all_reduce)
        eff = nccl::tree_correction(p, payload_bytes);
      const double t = lat + payload_bytes * per_byte / eff;
      if (t < best.estimate_s) {
        best = {a, p, a == Algorithm::nvls ? sh.nvls_channels : sh.channels, t};
      }
    }
  }
  return best;
}

Algorithm choose_algorithm(CollectiveType type, double payload_bytes,
                           std::span<const EndpointId> members, const Topology& topology) {
  return choose_collective(type, payload_bytes, members, topology).algorithm;
}

}  // namespace clustersim::engine
