// The physical cluster as a Boost.Graph: GPUs, switches, CPUs and NICs joined by directed links.
// Every bandwidth is per direction; add_link() adds both directions of a cable.
//
// Routes are shortest paths by hop count that never pass *through* a GPU (GPUs do not forward
// traffic). Among shortest paths the widest (largest narrowest link) wins, so NVLink beats a PCIe
// path of equal length; where several remain (spines of a fat tree), a deterministic hash of
// (source, destination) picks one, like ECMP. Routes are searched lazily, pair by pair, over the
// vertices on the pair's shortest paths only, and cached per pair.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/names.hpp"
#include "engine/units.hpp"

namespace clustersim::engine {

using VertexId = std::uint32_t;
using LinkId = std::uint32_t;
// A GPU, numbered in the order added (node-major), or a GPU's host memory: num_gpus() + the
// GPU's number (host_endpoint).
using EndpointId = std::uint32_t;

enum class VertexKind : std::uint8_t {
  gpu,
  nvswitch,
  pcie_switch,
  cpu,
  nic,
  leaf_switch,
  spine_switch,
  core_switch,  // a three-level fat tree's top: joins the pods' spines
};
enum class LinkKind : std::uint8_t { nvlink, pcie, ib, ethernet, cpu_interconnect };
inline constexpr int kNumLinkKinds = 5;

inline constexpr NameTable kVertexKindNames{std::array<std::pair<VertexKind, std::string_view>, 8>{{
    {VertexKind::gpu, "gpu"},
    {VertexKind::nvswitch, "nvswitch"},
    {VertexKind::pcie_switch, "pcie-switch"},
    {VertexKind::cpu, "cpu"},
    {VertexKind::nic, "nic"},
    {VertexKind::leaf_switch, "leaf-switch"},
    {VertexKind::spine_switch, "spine-switch"},
    {VertexKind::core_switch, "core-switch"},
}}};
// The spelling of scenario keys (simulation.link_efficiency.<kind>), JSON and traces alike.
inline constexpr NameTable kLinkKindNames{
    std::array<std::pair<LinkKind, std::string_view>, kNumLinkKinds>{{
        {LinkKind::nvlink, "nvlink"},
        {LinkKind::pcie, "pcie"},
        {LinkKind::ib, "ib"},
        {LinkKind::ethernet, "ethernet"},
        {LinkKind::cpu_interconnect, "cpu_interconnect"},
    }}};

std::string_view to_string(VertexKind);
std::string_view to_string(LinkKind);

struct VertexInfo {
  VertexKind kind = VertexKind::gpu;
  std::string name;  // "n3.gpu2", "leaf1"
  int node = -1;     // node index, -1 for fabric switches
};

// What the collective tuner needs to know about the hardware beyond links (docs/network.md
// "Channels", "Protocols", "The tuner"): the GPU generation (NCCL's tuning tables are per
// architecture), whether the NVSwitch can reduce (NVLS), whether the fabric's switches can
// (SHARP / CollNet), and a user override of the channel count.
struct CollectiveHardware {
  int gpu_arch = 80;   // compute capability × 10: 70 Volta, 80 Ampere, 90 Hopper, 100 Blackwell
  bool nvls = false;   // NVSwitch gen 3+ with multicast/reduction (H100, H200, B200)
  bool sharp = false;  // in-network reduction in the fabric's switches (CollNet)
  int channels = 0;    // simulation.nccl.channels; 0 = NCCL's rule from the topology
  // simulation.nccl.min_ctas (NCCL_MIN_CTAS): NCCL clamps its ring/tree channels and its NVLS
  // channels to at least this many (setupChannels; nvls.cc); 0 = no floor.
  int min_ctas = 0;
  double nic_latency_us = 0.0;  // the network plugin's reported latency (NCCL graph latencyInter)
  // The host CPU is AMD (NCCL's cpuVendor): across nodes NCCL's tuner then takes a 2 µs network
  // overhead per ring step (getNetOverhead; Intel 1) and the AMD row of llMaxBws.
  bool amd_cpu = false;
};

struct LinkInfo {
  VertexId src = 0;
  VertexId dst = 0;
  Bandwidth bandwidth;
  Time latency;
  LinkKind kind = LinkKind::nvlink;
  std::string name;  // "n3.gpu2->n3.nvswitch"
};

class Topology {
 public:
  Topology();
  ~Topology();
  Topology(const Topology& other);
  Topology& operator=(const Topology& other);
  Topology(Topology&&) noexcept;
  Topology& operator=(Topology&&) noexcept;

  VertexId add_vertex(VertexKind kind, std::string name, int node);
  // A GPU endpoint; endpoints are numbered 0, 1, ... in the order they are added.
  EndpointId add_gpu(std::string name, int node);
  // Both directions of a cable, each with `bandwidth`.
  void add_link(VertexId a, VertexId b, Bandwidth bandwidth, Time latency, LinkKind kind);
  LinkId add_directed_link(VertexId src, VertexId dst, Bandwidth bandwidth, Time latency,
                           LinkKind kind);
  // Scales every link of `kind` to the share of its nominal bandwidth that transfers achieve
  // (0 < factor <= 1): protocol overheads the per-byte model does not otherwise see.
  void derate(LinkKind kind, double factor);

  std::size_t num_vertices() const { return vertices_.size(); }
  std::size_t num_links() const { return links_.size(); }
  std::size_t num_gpus() const { return gpus_.size(); }
  int num_nodes() const { return num_nodes_; }
  const VertexInfo& vertex(VertexId v) const { return vertices_[v]; }
  const LinkInfo& link(LinkId l) const { return links_[l]; }
  VertexId gpu_vertex(EndpointId e) const { return gpus_[e]; }
  int node_of(EndpointId e) const { return vertices_[endpoint_vertex(e)].node; }

  // Host memory as an endpoint (docs/topology.md "Host memory"): the pinned buffers GPU `gpu`
  // copies to and from live in the memory of the CPU nearest it (fewest hops, then the lowest
  // CPU vertex), so a host copy is a flow between the GPU and that CPU vertex, over the GPU's
  // PCIe link and switch, competing with whatever else crosses them (a NIC on the same switch).
  EndpointId host_endpoint(EndpointId gpu) const;
  bool is_host_endpoint(EndpointId e) const { return e >= gpus_.size(); }
  // The vertex an endpoint stands for: the GPU, or the CPU its host memory hangs off.
  VertexId endpoint_vertex(EndpointId e) const;

  const CollectiveHardware& collective_hardware() const { return collective_hw_; }
  void set_collective_hardware(const CollectiveHardware& hw) { collective_hw_ = hw; }
  // The NIC vertex GPU `e` reaches other nodes through (the first NIC on its route to a GPU of
  // another node); kNoVertex on a single node. Cached.
  static constexpr VertexId kNoVertex = ~VertexId{0};
  VertexId nic_of(EndpointId e) const;

  // The links from endpoint `src` to endpoint `dst` in order (empty when src == dst; a GPU and
  // its own host endpoint are two). Throws
  // std::runtime_error when dst cannot be reached. The span stays valid for the Topology's life.
  std::span<const LinkId> route(EndpointId src, EndpointId dst) const;
  Time route_latency(EndpointId src, EndpointId dst) const;         // sum over the route's links
  Bandwidth route_bandwidth(EndpointId src, EndpointId dst) const;  // its narrowest link

 private:
  // The Boost.Graph adjacency list, defined in topology.cpp: its header costs two seconds of
  // parsing in every file that includes this one (docs/performance.md "Build time").
  struct Graph;

  // The route search between one pair (topology.cpp, "Route search"): its scratch, reused from
  // one search to the next and reset only where the last one wrote.
  struct RouteSearch;
  // Labels the shortest paths from `from` to `to` in route_search_; returns their hop count, or
  // kUnreachable.
  static constexpr std::uint32_t kUnreachable = ~std::uint32_t{0};
  std::uint32_t search_routes(VertexId from, VertexId to) const;
  // Link bandwidths ranked in increasing order (0: none, the largest + 1: unbounded), so widest
  // bottlenecks compare as small integers, exactly as the bandwidths they stand for.
  std::uint16_t link_width_rank(LinkId l) const;

  std::unique_ptr<Graph> graph_;
  std::vector<VertexInfo> vertices_;
  std::vector<LinkInfo> links_;
  std::vector<VertexId> gpus_;
  int num_nodes_ = 0;
  CollectiveHardware collective_hw_;
  mutable std::vector<VertexId> nic_cache_;
  mutable std::vector<VertexId> host_cache_;  // per GPU: its nearest CPU vertex

  // Lazily filled caches; the simulator is single-threaded.
  mutable std::vector<std::uint16_t> width_rank_;  // per link, filled with the first search
  mutable std::uint16_t unbounded_rank_ = 0;
  mutable std::unique_ptr<RouteSearch> route_search_;  // made by the first search
  mutable std::unordered_map<std::uint64_t, std::vector<LinkId>> route_cache_;
};

}  // namespace clustersim::engine
