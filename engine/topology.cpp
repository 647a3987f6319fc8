#include "engine/topology.hpp"

#include <algorithm>
#include <array>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <boost/graph/reverse_graph.hpp>
#include <boost/graph/visitors.hpp>
#include <boost/pending/queue.hpp>
#include <limits>
#include <stdexcept>
#include <unordered_set>

namespace clustersim::engine {

namespace {
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

// Route search. A route is a shortest path by hops (no GPU forwards), the widest among those,
// then a hash-driven pick; so only the vertices on shortest `from`->`to` paths matter: those v
// with d(from, v) + d(v, to) = D. Breadth-first searches from both ends, one level at a time on
// the side with the smaller frontier, first share a vertex when their depths add up to D; in a
// fat tree that is at the leaf or the spine, having labelled only the two nodes' switches and
// NICs, their leaves and the spines of a 16,384-GPU fabric's 47,617 vertices (docs/performance.md,
// issue 11). Every vertex on a shortest path from such a v
// to `to` is itself one of them, so the hop counts and widest bottlenecks over them, and the
// route, are those of a search over the whole graph.
//
// Each level is one boost::breadth_first_visit from the frontier over the graph (forward) or its
// reverse (towards `to`), filtered to edges leaving the frontier and to vertices that forward:
// it stops one level on, so the two sides can take turns and stop where they meet, which one
// breadth_first_search (the whole graph) cannot. The side towards `to` takes the widest
// bottleneck as it goes (a level's vertices are final before the next is labelled); the source
// side keeps the links it crossed between levels and, once the two meet, takes its widest values
// back along them.
struct Topology::RouteSearch {
  enum Side : std::uint8_t { kFromSource = 0, kToDestination = 1 };
  using Queue = boost::queue<std::size_t>;

  // Follows only edges leaving the side's frontier (its vertices `depth` hops from its start).
  template <class G>
  struct FrontierEdge {
    const G* graph = nullptr;
    const std::uint32_t* dist = nullptr;
    std::uint32_t depth = 0;
    template <class Edge>
    bool operator()(const Edge& e) const {
      return dist[boost::source(e, *graph)] == depth;
    }
  };

  // Labels the next level: its hop counts, and either its widest bottleneck to `to` (the best
  // over the edges from the frontier into it) or the links that reach it from the frontier.
  struct LevelVisitor : boost::default_bfs_visitor {
    RouteSearch* search = nullptr;
    Side side = kFromSource;
    const std::uint16_t* width_rank = nullptr;

    template <class Edge, class G>
    void tree_edge(const Edge& e, const G& g) const {
      const auto w = static_cast<VertexId>(boost::target(e, g));
      search->dist[side][w] = search->dist[side][boost::source(e, g)] + 1;
      search->reached[side].push_back(w);
      non_tree_edge(e, g);
    }
    template <class Edge, class G>
    void non_tree_edge(const Edge& e, const G& g) const {
      const auto u = static_cast<VertexId>(boost::source(e, g));
      const auto w = static_cast<VertexId>(boost::target(e, g));
      if (search->dist[side][w] != search->dist[side][u] + 1) return;
      const LinkId link = g[e].link;
      if (side == kFromSource) {
        search->forward_links.push_back(link);
        return;
      }
      std::uint16_t& best = search->widest[w];
      best = std::max(best, std::min(width_rank[link], search->widest[u]));
    }
  };

  std::array<std::vector<std::uint32_t>, 2> dist;  // hops from the source, to the destination
  std::array<std::vector<boost::default_color_type>, 2> color;
  std::array<std::vector<VertexId>, 2> reached;  // labelled vertices, level by level
  std::array<std::size_t, 2> frontier{};         // where the last level starts in `reached`
  std::array<std::uint32_t, 2> depth{};
  std::vector<std::uint16_t> widest;    // widest bottleneck to the destination, as a width rank
  std::vector<std::uint8_t> on_path;    // source side: on a shortest path to the destination
  std::vector<LinkId> forward_links;    // source side: links from a level to the next, in order
  std::uint32_t length = kUnreachable;  // D
  std::vector<VertexId> sources;
  Queue queue;

  explicit RouteSearch(std::size_t vertices) : widest(vertices, 0), on_path(vertices, 0) {
    for (int s = 0; s < 2; ++s) {
      dist[s].assign(vertices, kUnreachable);
      color[s].assign(vertices, boost::white_color);
    }
  }

  // Clears what the last search wrote, then starts both sides.
  void start(VertexId from, VertexId to, std::uint16_t unbounded) {
    for (int s = 0; s < 2; ++s)
      for (VertexId v : reached[s]) {
        dist[s][v] = kUnreachable;
        color[s][v] = boost::white_color;
        widest[v] = 0;
        on_path[v] = 0;
      }
    forward_links.clear();
    const std::array<VertexId, 2> ends{from, to};
    for (int s = 0; s < 2; ++s) {
      reached[s].assign(1, ends[s]);
      dist[s][ends[s]] = 0;
      frontier[s] = 0;
      depth[s] = 0;
    }
    widest[to] = unbounded;
    length = kUnreachable;
  }

  // Hops from v to the destination if v is on a shortest path from the source (or labelled
  // from the destination's side, where the count is exact), else kUnreachable.
  std::uint32_t hops(VertexId v) const {
    if (dist[kToDestination][v] != kUnreachable) return dist[kToDestination][v];
    return on_path[v] ? length - dist[kFromSource][v] : kUnreachable;
  }

  // One level on one side; whether it met the other side.
  template <class G>
  bool expand(const G& graph, Side side, const RoutableVertex& routable,
              const std::uint16_t* width_rank) {
    using Filter = FrontierEdge<G>;
    const boost::filtered_graph<G, Filter, RoutableVertex> level(
        graph, Filter{&graph, dist[side].data(), depth[side]}, routable);
    const std::size_t begin = reached[side].size();
    // The frontier is copied out: the visitor appends the next level to `reached`.
    sources.assign(reached[side].begin() + static_cast<std::ptrdiff_t>(frontier[side]),
                   reached[side].end());
    boost::breadth_first_visit(level, sources.begin(), sources.end(), queue,
                               LevelVisitor{{}, this, side, width_rank}, color[side].data());
    frontier[side] = begin;
    ++depth[side];
    const auto& other = dist[1 - side];
    return std::any_of(reached[side].begin() + static_cast<std::ptrdiff_t>(begin),
                       reached[side].end(),
                       [&other](VertexId v) { return other[v] != kUnreachable; });
  }

  // After the meeting: the source side's vertices on shortest paths and their widest
  // bottlenecks, from the links between levels taken backwards (the farther level first).
  void finish_source_side(const std::vector<LinkInfo>& links, const std::uint16_t* width_rank) {
    length = depth[kFromSource] + depth[kToDestination];
    for (auto l = forward_links.rbegin(); l != forward_links.rend(); ++l) {
      const VertexId u = links[*l].src;
      const VertexId w = links[*l].dst;
      if (!on_path[w] && dist[kToDestination][w] == kUnreachable) continue;
      on_path[u] = 1;
      widest[u] = std::max(widest[u], std::min(width_rank[*l], widest[w]));
    }
  }
};

std::uint32_t Topology::search_routes(VertexId from, VertexId to) const {
  if (!route_search_ || route_search_->widest.size() != vertices_.size())
    route_search_ = std::make_unique<RouteSearch>(vertices_.size());
  RouteSearch& search = *route_search_;
  if (!links_.empty()) link_width_rank(0);  // ranks the links once (none: nothing to route)
  search.start(from, to, unbounded_rank_);
  const RoutableVertex routable{&vertices_, to};
  const auto reversed = boost::make_reverse_graph(graph_->list);
  using Side = RouteSearch::Side;
  while (true) {
    const std::size_t forward = search.reached[0].size() - search.frontier[0];
    const std::size_t backward = search.reached[1].size() - search.frontier[1];
    if (forward == 0 || backward == 0) return kUnreachable;  // one side's ball is complete
    const bool met =
        backward < forward
            ? search.expand(reversed, Side::kToDestination, routable, width_rank_.data())
            : search.expand(graph_->list, Side::kFromSource, routable, width_rank_.data());
    if (met) break;
  }
  search.finish_source_side(links_, width_rank_.data());
  return search.length;
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
  if (search_routes(from, to) == kUnreachable)
    throw std::runtime_error("topology: " + vertices_[to].name + " cannot be reached from " +
                             vertices_[from].name);
  const RouteSearch& search = *route_search_;

  std::vector<LinkId> path;
  VertexId at = from;
  std::uint64_t h = mix(key);
  while (at != to) {
    // Candidates: links one hop closer to dst, not forwarding through a GPU, that keep the
    // widest bottleneck, in the graph's (insertion) order.
    const std::uint32_t hops = search.hops(at);
    LinkId chosen = 0;
    std::uint32_t candidates = 0;
    for (auto [e, end] = boost::out_edges(at, graph_->list); e != end; ++e) {
      const auto next = static_cast<VertexId>(boost::target(*e, graph_->list));
      if (next != to && vertices_[next].kind == VertexKind::gpu) continue;
      const std::uint32_t next_hops = search.hops(next);
      if (next_hops == kUnreachable || next_hops + 1 != hops) continue;
      const std::uint16_t width = width_rank_[graph_->list[*e].link];
      if (std::min(width, search.widest[next]) != search.widest[at]) continue;
      ++candidates;
      // Reservoir choice driven by the hash keeps the pick uniform and deterministic.
      if (h % candidates == 0) chosen = graph_->list[*e].link;
      h = mix(h);
    }
    // The search labels a next hop for every vertex on a shortest path; none would be its bug.
    if (candidates == 0) throw std::logic_error("topology: route search lost its way");
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
