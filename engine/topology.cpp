#include "engine/topology.hpp"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <boost/graph/reverse_graph.hpp>
#include <boost/graph/visitors.hpp>
#include <limits>
#include <stdexcept>
#include <unordered_set>

namespace clustersim::engine {

namespace {
constexpr std::uint32_t kUnreached = std::numeric_limits<std::uint32_t>::max();

// Vertex filter for routing: GPUs do not forward traffic, so only the destination GPU is kept.
struct RoutableVertex {
  const std::vector<VertexInfo>* vertices = nullptr;
  VertexId dst = 0;
  bool operator()(std::size_t v) const {
    return v == dst || (*vertices)[v].kind != VertexKind::gpu;
  }
};

// SplitMix64: a fixed, platform-independent hash so equal-cost choices never depend on the
// standard library's std::hash.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
}  // namespace

// Inside Topology::Graph rather than an anonymous namespace: a member of a class with linkage
// whose type has none draws GCC's -Wsubobject-linkage once a unity build (CI) puts this file
// into a batch.
struct Topology::Graph {
  struct EdgeProps {
    LinkId link = 0;
  };
  using AdjacencyList = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS,
                                              boost::no_property, EdgeProps>;
  AdjacencyList list;
};

Topology::Topology() : graph_(std::make_unique<Graph>()) {}
Topology::~Topology() = default;
Topology::Topology(Topology&&) noexcept = default;
Topology& Topology::operator=(Topology&&) noexcept = default;
Topology::Topology(const Topology& other)
    : graph_(std::make_unique<Graph>(*other.graph_)),
      vertices_(other.vertices_),
      links_(other.links_),
      gpus_(other.gpus_),
      num_nodes_(other.num_nodes_),
      collective_hw_(other.collective_hw_) {}  // the route caches refill on demand
Topology& Topology::operator=(const Topology& other) {
  if (this != &other) *this = Topology(other);
  return *this;
}

std::string_view to_string(VertexKind k) {
  return kVertexKindNames.name(k);
}

std::string_view to_string(LinkKind k) {
  return kLinkKindNames.name(k);
}

VertexId Topology::add_vertex(VertexKind kind, std::string name, int node) {
  const auto v = static_cast<VertexId>(boost::add_vertex(graph_->list));
  vertices_.push_back({kind, std::move(name), node});
  if (node + 1 > num_nodes_) num_nodes_ = node + 1;
  return v;
}

EndpointId Topology::add_gpu(std::string name, int node) {
  const VertexId v = add_vertex(VertexKind::gpu, std::move(name), node);
  gpus_.push_back(v);
  return static_cast<EndpointId>(gpus_.size() - 1);
}

LinkId Topology::add_directed_link(VertexId src, VertexId dst, Bandwidth bandwidth, Time latency,
                                   LinkKind kind) {
  if (src >= vertices_.size() || dst >= vertices_.size() || src == dst)
    throw std::invalid_argument("topology: link between invalid vertices");
  if (!(bandwidth.bytes_per_second() > 0.0))
    throw std::invalid_argument("topology: link " + vertices_[src].name + "->" +
                                vertices_[dst].name + " needs a positive bandwidth");
  const auto id = static_cast<LinkId>(links_.size());
  links_.push_back(
      {src, dst, bandwidth, latency, kind, vertices_[src].name + "->" + vertices_[dst].name});
  boost::add_edge(src, dst, Graph::EdgeProps{id}, graph_->list);
  hops_cache_.clear();
  route_cache_.clear();
  nic_cache_.clear();
  host_cache_.clear();
  width_rank_.clear();
  return id;
}

void Topology::derate(LinkKind kind, double factor) {
  if (!(factor > 0.0 && factor <= 1.0))
    throw std::invalid_argument("topology: a link efficiency must be in (0, 1]");
  for (auto& l : links_)
    if (l.kind == kind) l.bandwidth = l.bandwidth * factor;
  // Routes chose among the old bandwidths.
  hops_cache_.clear();
  route_cache_.clear();
  nic_cache_.clear();
  width_rank_.clear();
}

std::uint16_t Topology::link_width_rank(LinkId l) const {
  if (width_rank_.size() != links_.size()) {
    std::vector<double> widths;
    for (const auto& link : links_)
      widths.push_back(link.bandwidth.bytes_per_second());
    std::sort(widths.begin(), widths.end());
    widths.erase(std::unique(widths.begin(), widths.end()), widths.end());
    if (widths.size() + 2 > std::numeric_limits<std::uint16_t>::max())
      throw std::invalid_argument("topology: more than 65,533 distinct link bandwidths");
    width_rank_.resize(links_.size());
    for (LinkId i = 0; i < links_.size(); ++i)
      width_rank_[i] = static_cast<std::uint16_t>(
          1 +
          std::lower_bound(widths.begin(), widths.end(), links_[i].bandwidth.bytes_per_second()) -
          widths.begin());
    unbounded_rank_ = static_cast<std::uint16_t>(widths.size() + 1);
  }
  return width_rank_[l];
}

void Topology::add_link(VertexId a, VertexId b, Bandwidth bandwidth, Time latency, LinkKind kind) {
  add_directed_link(a, b, bandwidth, latency, kind);
  add_directed_link(b, a, bandwidth, latency, kind);
}

// Hop count from every vertex to `dst`, over paths whose intermediate vertices are not GPUs, and
// the widest bottleneck over those shortest paths (the tie-break that keeps NVLink ahead of PCIe).
const Topology::Distances& Topology::distances_to(VertexId dst) const {
  auto it = hops_cache_.find(dst);
  if (it != hops_cache_.end()) return it->second;

  std::vector<std::uint32_t>& hops = scratch_hops_;
  hops.assign(vertices_.size(), kUnreached);
  hops[dst] = 0;
  // Search backwards from dst; GPUs other than dst are leaves: reached, never expanded.
  const auto reversed = boost::make_reverse_graph(graph_->list);
  const boost::filtered_graph<decltype(reversed), boost::keep_all, RoutableVertex> routable(
      reversed, boost::keep_all(), RoutableVertex{&vertices_, dst});
  boost::breadth_first_search(routable, dst,
                              boost::visitor(boost::make_bfs_visitor(
                                  boost::record_distances(hops.data(), boost::on_tree_edge()))));
  // A GPU source is one hop beyond its best non-GPU neighbour.
  for (VertexId g : gpus_) {
    if (g == dst) continue;
    for (auto [e, end] = boost::out_edges(g, graph_->list); e != end; ++e) {
      const auto next = boost::target(*e, graph_->list);
      if (hops[next] != kUnreached && (next == dst || vertices_[next].kind != VertexKind::gpu))
        hops[g] = std::min(hops[g], hops[next] + 1);
    }
  }
  Distances d;
  d.hops.resize(vertices_.size());
  for (VertexId v = 0; v < vertices_.size(); ++v) {
    if (hops[v] != kUnreached && hops[v] >= kFar)
      throw std::invalid_argument("topology: a route to " + vertices_[dst].name +
                                  " takes more than 254 hops");
    d.hops[v] = hops[v] == kUnreached ? kFar : static_cast<std::uint8_t>(hops[v]);
  }

  // Widest bottleneck, layer by layer outwards from dst: a vertex depends only on the next layer.
  // Reached vertices by hop count, in vertex order within a layer: a counting sort (hop counts
  // are small), the same order a stable sort by hops gives at a fraction of its cost.
  std::uint32_t max_hops = 0;
  for (VertexId v = 0; v < vertices_.size(); ++v)
    if (hops[v] != kUnreached) max_hops = std::max(max_hops, hops[v]);
  std::vector<std::uint32_t> start(max_hops + 2, 0);
  for (VertexId v = 0; v < vertices_.size(); ++v)
    if (hops[v] != kUnreached && v != dst) ++start[hops[v] + 1];
  for (std::size_t h = 1; h < start.size(); ++h)
    start[h] += start[h - 1];
  std::vector<VertexId>& order = scratch_order_;
  order.resize(start.back());
  for (VertexId v = 0; v < vertices_.size(); ++v)
    if (hops[v] != kUnreached && v != dst) order[start[hops[v]]++] = v;
  if (!links_.empty()) link_width_rank(0);  // ranks the links once (none: nothing to route)
  d.widest.assign(vertices_.size(), 0);
  d.widest[dst] = unbounded_rank_;
  for (VertexId v : order)
    for (auto [e, end] = boost::out_edges(v, graph_->list); e != end; ++e) {
      const auto next = static_cast<VertexId>(boost::target(*e, graph_->list));
      if (!on_shortest_path(d.hops, v, next, dst)) continue;
      const std::uint16_t width = width_rank_[graph_->list[*e].link];
      d.widest[v] = std::max(d.widest[v], std::min(width, d.widest[next]));
    }
  return hops_cache_.emplace(dst, std::move(d)).first->second;
}

bool Topology::on_shortest_path(const std::vector<std::uint8_t>& hops, VertexId at, VertexId next,
                                VertexId dst) const {
  if (next != dst && vertices_[next].kind == VertexKind::gpu) return false;
  return hops[next] != kFar && hops[next] + 1 == hops[at];
}

std::span<const LinkId> Topology::route(EndpointId src, EndpointId dst) const {
  if (src >= 2 * gpus_.size() || dst >= 2 * gpus_.size())
    throw std::out_of_range("topology: route between unknown GPUs");
  if (src == dst) return {};
  const std::uint64_t key = (static_cast<std::uint64_t>(src) << 32) | dst;
  if (auto it = route_cache_.find(key); it != route_cache_.end()) return it->second;

  const VertexId from = endpoint_vertex(src);
  const VertexId to = endpoint_vertex(dst);
  if (from == to) return route_cache_.emplace(key, std::vector<LinkId>{}).first->second;
  const Distances& dist = distances_to(to);
  const auto& hops = dist.hops;
  if (hops[from] == kFar)
    throw std::runtime_error("topology: " + vertices_[to].name + " cannot be reached from " +
                             vertices_[from].name);

  std::vector<LinkId> path;
  VertexId at = from;
  std::uint64_t h = mix(key);
  while (at != to) {
    // Candidates: links one hop closer to dst that keep the widest bottleneck, in the graph's
    // (insertion) order.
    LinkId chosen = 0;
    std::uint32_t candidates = 0;
    for (auto [e, end] = boost::out_edges(at, graph_->list); e != end; ++e) {
      const auto next = static_cast<VertexId>(boost::target(*e, graph_->list));
      if (!on_shortest_path(hops, at, next, to)) continue;
      const std::uint16_t width = link_width_rank(graph_->list[*e].link);
      if (std::min(width, dist.widest[next]) != dist.widest[at]) continue;
      ++candidates;
      // Reservoir choice driven by the hash keeps the pick uniform and deterministic.
      if (h % candidates == 0) chosen = graph_->list[*e].link;
      h = mix(h);
    }
    path.push_back(chosen);
    at = links_[chosen].dst;
  }
  return route_cache_.emplace(key, std::move(path)).first->second;
}

VertexId Topology::nic_of(EndpointId e) const {
  if (nic_cache_.size() != gpus_.size()) nic_cache_.assign(gpus_.size(), kNoVertex - 1);
  VertexId& cached = nic_cache_.at(e);
  if (cached != kNoVertex - 1) return cached;
  cached = kNoVertex;
  const int node = node_of(e);
  for (EndpointId other = 0; other < gpus_.size(); ++other) {
    if (node_of(other) == node) continue;
    for (LinkId l : route(e, other)) {
      if (vertices_[links_[l].dst].kind == VertexKind::nic) {
        cached = links_[l].dst;
        break;
      }
    }
    break;
  }
  return cached;
}

EndpointId Topology::host_endpoint(EndpointId gpu) const {
  if (gpu >= gpus_.size()) throw std::out_of_range("topology: host of an unknown GPU");
  return static_cast<EndpointId>(gpus_.size() + gpu);
}

VertexId Topology::endpoint_vertex(EndpointId e) const {
  if (e < gpus_.size()) return gpus_[e];
  const EndpointId gpu = e - static_cast<EndpointId>(gpus_.size());
  if (gpu >= gpus_.size()) throw std::out_of_range("topology: unknown endpoint");
  if (host_cache_.size() != gpus_.size()) host_cache_.assign(gpus_.size(), kNoVertex);
  VertexId& cached = host_cache_[gpu];
  if (cached != kNoVertex) return cached;
  // Breadth first from the GPU inside its node, never through another GPU; the lowest CPU
  // vertex of the first level that has one. Local: a few vertices, not a cached per-destination
  // search per CPU (which would cost 3 bytes per vertex for every CPU of a large cluster).
  const VertexId g = gpus_[gpu];
  const int node = vertices_[g].node;
  std::vector<VertexId> level{g}, next;
  std::unordered_set<VertexId> seen{g};
  while (!level.empty() && cached == kNoVertex) {
    next.clear();
    for (VertexId v : level)
      for (auto [edge, end] = boost::out_edges(v, graph_->list); edge != end; ++edge) {
        const auto w = static_cast<VertexId>(boost::target(*edge, graph_->list));
        if (vertices_[w].node != node || vertices_[w].kind == VertexKind::gpu) continue;
        if (!seen.insert(w).second) continue;
        if (vertices_[w].kind == VertexKind::cpu) cached = std::min(cached, w);
        next.push_back(w);
      }
    level.swap(next);
  }
  if (cached == kNoVertex)
    throw std::runtime_error("topology: " + vertices_[g].name + " reaches no CPU of its node");
  return cached;
}

Time Topology::route_latency(EndpointId src, EndpointId dst) const {
  Time t = Time::zero();
  for (LinkId l : route(src, dst))
    t += links_[l].latency;
  return t;
}

Bandwidth Topology::route_bandwidth(EndpointId src, EndpointId dst) const {
  Bandwidth narrowest = Bandwidth::bytes_per_second(std::numeric_limits<double>::infinity());
  for (LinkId l : route(src, dst))
    narrowest = std::min(narrowest, links_[l].bandwidth);
  return narrowest;
}

}  // namespace clustersim::engine
