// Collective algorithms as per-byte flow plans: ring, direct, hierarchical, scatter/gather, and
// the entry points that dispatch to NCCL's plans (nccl_collectives.cpp). Byte and latency
// formulas: docs/network.md.
#include "engine/network/collectives.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/network/collective_parts.hpp"

namespace clustersim::engine {

namespace detail {

std::string describe(CollectiveType type, Algorithm algorithm) {
  return std::string(to_string(algorithm)) + " " + std::string(to_string(type));
}

[[noreturn]] void unsupported(CollectiveType type, Algorithm algorithm, const char* allowed) {
  throw std::invalid_argument("collective algorithm " + describe(type, algorithm) +
                              " does not exist; " + allowed);
}

// A phase whose latency is `steps` algorithm steps, each costing the slowest route of the phase.
Phase make_phase(const Topology& topology, Flows flows, std::int64_t steps) {
  Time alpha = Time::zero();
  for (const FlowSpec& f : flows)
    alpha = std::max(alpha, topology.route_latency(f.src, f.dst));
  Phase phase;
  phase.latency = alpha * steps;
  phase.flows = std::move(flows);
  phase.steps = static_cast<std::uint32_t>(std::max<std::int64_t>(steps, 1));
  return phase;
}

void add_phase(TransferPlan& plan, const Topology& topology, Flows flows, std::int64_t steps) {
  if (flows.empty()) return;
  plan.phases.push_back(make_phase(topology, std::move(flows), steps));
}

// Ring edges member[i] -> member[i+1 mod n], each carrying `bytes` per payload byte.
void add_ring(Flows& flows, std::span<const EndpointId> ring, double bytes) {
  const std::size_t n = ring.size();
  if (n < 2) return;
  for (std::size_t i = 0; i < n; ++i)
    flows.push_back({ring[i], ring[(i + 1) % n], bytes});
}

// Every ordered pair i != j carries `bytes`.
void add_all_pairs(Flows& flows, std::span<const EndpointId> members, double bytes) {
  for (EndpointId src : members) {
    for (EndpointId dst : members) {
      if (src != dst) flows.push_back({src, dst, bytes});
    }
  }
}

// Parent of `rank` in NCCL's binary tree over n ranks (ncclGetBtree, src/graph/trees.cc):
// the lowest set bit `b` of rank decides, parent = (rank ^ b) | (b << 1), or rank ^ b when
// that is out of range. Rank 0 is the root (returns n).
std::size_t btree_parent(std::size_t n, std::size_t rank) {
  if (rank == 0) return n;
  std::size_t bit = 1;
  while (bit < n && (bit & rank) == 0)
    bit <<= 1;
  std::size_t up = (rank ^ bit) | (bit << 1);
  if (up >= n) up = rank ^ bit;
  return up;
}

// The complementary tree of ncclGetDtree: mirrored (n even) or shifted by one (n odd), so that
// most ranks that are leaves of one tree are inner nodes of the other.
std::size_t dtree_second_parent(std::size_t n, std::size_t rank) {
  if (n % 2 == 1) {
    const std::size_t p = btree_parent(n, (rank + n - 1) % n);
    return p == n ? n : (p + 1) % n;
  }
  const std::size_t p = btree_parent(n, n - 1 - rank);
  return p == n ? n : n - 1 - p;
}

// Members grouped by node in order of first appearance; within a node they keep group order.
std::vector<std::vector<EndpointId>> group_by_node(std::span<const EndpointId> m,
                                                   const Topology& topology) {
  std::vector<int> nodes;
  std::vector<std::vector<EndpointId>> groups;
  for (EndpointId e : m) {
    const int node = topology.node_of(e);
    const auto it = std::find(nodes.begin(), nodes.end(), node);
    if (it == nodes.end()) {
      nodes.push_back(node);
      groups.push_back({e});
    } else {
      groups[static_cast<std::size_t>(it - nodes.begin())].push_back(e);
    }
  }
  return groups;
}

// How many distinct nodes the members sit on.
std::size_t count_nodes(std::span<const EndpointId> members, const Topology& topology) {
  std::vector<int> nodes;
  for (EndpointId e : members)
    nodes.push_back(topology.node_of(e));
  std::sort(nodes.begin(), nodes.end());
  return static_cast<std::size_t>(std::unique(nodes.begin(), nodes.end()) - nodes.begin());
}

}  // namespace detail

namespace {

using namespace detail;

// Members grouped by node (in order of first appearance); every node must hold as many.
std::vector<std::vector<EndpointId>> by_node(std::span<const EndpointId> m,
                                             const Topology& topology, CollectiveType type) {
  const auto groups = group_by_node(m, topology);
  for (const auto& g : groups) {
    if (g.size() != groups.front().size()) {
      throw std::invalid_argument(
          "hierarchical " + std::string(to_string(type)) +
          " needs the same number of group members on every node; node " +
          std::to_string(topology.node_of(g.front())) + " holds " + std::to_string(g.size()) +
          " but node " + std::to_string(topology.node_of(groups.front().front())) + " holds " +
          std::to_string(groups.front().size()) + " (use ring instead)");
    }
  }
  return groups;
}

// The members holding local index k on each node.
std::vector<EndpointId> column(const std::vector<std::vector<EndpointId>>& groups, std::size_t k) {
  std::vector<EndpointId> col;
  col.reserve(groups.size());
  for (const auto& g : groups)
    col.push_back(g[k]);
  return col;
}

enum class RingKind { reduce_scatter, all_gather, all_reduce };

// One ring collective on every node at once (intra) or on every column at once (inter), on a
// share `scale` of the payload.
void add_level(TransferPlan& plan, const Topology& topology,
               const std::vector<std::vector<EndpointId>>& rings, RingKind kind, double scale) {
  const std::size_t n = rings.empty() ? 0 : rings.front().size();
  if (n < 2) return;
  const double dn = static_cast<double>(n);
  const double per_edge = (kind == RingKind::all_reduce ? 2.0 : 1.0) * (dn - 1.0) / dn * scale;
  const auto steps = static_cast<std::int64_t>((kind == RingKind::all_reduce ? 2 : 1) * (n - 1));
  Flows flows;
  for (const auto& ring : rings)
    add_ring(flows, ring, per_edge);
  add_phase(plan, topology, std::move(flows), steps);
}

TransferPlan hierarchical(CollectiveType type, std::span<const EndpointId> m,
                          const Topology& topology) {
  const auto nodes = by_node(m, topology, type);
  const std::size_t g = nodes.front().size();
  std::vector<std::vector<EndpointId>> columns;
  for (std::size_t k = 0; k < g; ++k)
    columns.push_back(column(nodes, k));
  const double dg = static_cast<double>(g);
  TransferPlan plan;
  switch (type) {
    case CollectiveType::all_reduce:
      // Intra reduce-scatter on S, inter all-reduce on the S/g shard, intra all-gather on S.
      add_level(plan, topology, nodes, RingKind::reduce_scatter, 1.0);
      add_level(plan, topology, columns, RingKind::all_reduce, 1.0 / dg);
      add_level(plan, topology, nodes, RingKind::all_gather, 1.0);
      break;
    case CollectiveType::all_gather:
      // Inter all-gather builds each rank's S/g slice, then the intra all-gather builds S.
      add_level(plan, topology, columns, RingKind::all_gather, 1.0 / dg);
      add_level(plan, topology, nodes, RingKind::all_gather, 1.0);
      break;
    case CollectiveType::reduce_scatter:
      // The mirror image of all-gather.
      add_level(plan, topology, nodes, RingKind::reduce_scatter, 1.0);
      add_level(plan, topology, columns, RingKind::reduce_scatter, 1.0 / dg);
      break;
    default:
      unsupported(type, Algorithm::hierarchical,
                  "hierarchical supports all_reduce, all_gather and reduce_scatter");
  }
  return plan;
}

TransferPlan ring(CollectiveType type, std::span<const EndpointId> m, std::uint32_t root,
                  const Topology& topology) {
  const std::size_t n = m.size();
  const double dn = static_cast<double>(n);
  const auto steps = static_cast<std::int64_t>(n - 1);
  TransferPlan plan;
  Flows flows;
  switch (type) {
    case CollectiveType::all_reduce:
      add_ring(flows, m, 2.0 * (dn - 1.0) / dn);
      add_phase(plan, topology, std::move(flows), 2 * steps);
      return plan;
    case CollectiveType::all_gather:
    case CollectiveType::reduce_scatter:
      add_ring(flows, m, (dn - 1.0) / dn);
      break;
    case CollectiveType::all_to_all:
      // Store-and-forward relay: the S/n chunk for the rank d places ahead crosses d ring edges,
      // so each edge carries (S/n)·(1 + 2 + ... + (n−1)) = S·(n−1)/2.
      add_ring(flows, m, (dn - 1.0) / 2.0);
      break;
    case CollectiveType::broadcast:
      // Pipelined chain root -> root+1 -> ... -> root+n−1: every edge carries S.
      for (std::size_t i = 0; i + 1 < n; ++i) {
        flows.push_back({m[(root + i) % n], m[(root + i + 1) % n], 1.0});
      }
      break;
    case CollectiveType::reduce:
      // Pipelined chain root+1 -> ... -> root+n−1 -> root.
      for (std::size_t i = 1; i < n; ++i)
        flows.push_back({m[(root + i) % n], m[(root + i + 1) % n], 1.0});
      break;
    case CollectiveType::scatter:
    case CollectiveType::gather:
    case CollectiveType::send_recv:
      return {};  // handled by plan_collective
  }
  add_phase(plan, topology, std::move(flows), steps);
  return plan;
}

TransferPlan direct(CollectiveType type, std::span<const EndpointId> m, std::uint32_t root,
                    const Topology& topology) {
  const std::size_t n = m.size();
  const double dn = static_cast<double>(n);
  const auto steps = static_cast<std::int64_t>(n - 1);
  TransferPlan plan;
  Flows flows;
  switch (type) {
    case CollectiveType::all_to_all:
      // As NCCL runs it: send/recv pairs in parts on its p2p channels, across nodes with PXN
      // relays (nccl_p2p.cpp).
      return nccl_all_to_all(m, topology);
    case CollectiveType::all_gather:
    case CollectiveType::reduce_scatter:
      add_all_pairs(flows, m, 1.0 / dn);
      add_phase(plan, topology, std::move(flows), steps);
      return plan;
    case CollectiveType::all_reduce: {
      // Direct reduce-scatter, then direct all-gather.
      Flows second;
      add_all_pairs(flows, m, 1.0 / dn);
      add_all_pairs(second, m, 1.0 / dn);
      add_phase(plan, topology, std::move(flows), steps);
      add_phase(plan, topology, std::move(second), steps);
      return plan;
    }
    case CollectiveType::broadcast:
    case CollectiveType::reduce:
      // The root sends the whole buffer to (or receives it from) every other member at once.
      for (std::size_t i = 0; i < n; ++i) {
        if (i == root) continue;
        if (type == CollectiveType::broadcast)
          flows.push_back({m[root], m[i], 1.0});
        else
          flows.push_back({m[i], m[root], 1.0});
      }
      add_phase(plan, topology, std::move(flows), 1);
      return plan;
    default:
      return {};  // handled by plan_collective
  }
}

// Scatter/gather: the root exchanges one S/n chunk with every other member, in one step.
TransferPlan rooted_scatter(CollectiveType type, std::span<const EndpointId> m, std::uint32_t root,
                            const Topology& topology) {
  const std::size_t n = m.size();
  Flows flows;
  for (std::size_t i = 0; i < n; ++i) {
    if (i == root) continue;
    if (type == CollectiveType::scatter)
      flows.push_back({m[root], m[i], 1.0 / static_cast<double>(n)});
    else
      flows.push_back({m[i], m[root], 1.0 / static_cast<double>(n)});
  }
  TransferPlan plan;
  add_phase(plan, topology, std::move(flows), 1);
  return plan;
}

// A group `what` runs over: not empty, GPUs of the topology, none twice.
void check_members(std::string_view what, std::span<const EndpointId> members,
                   const Topology& topology) {
  if (members.empty()) throw std::invalid_argument(std::string(what) + " over an empty group");
  std::vector<EndpointId> sorted(members.begin(), members.end());
  std::sort(sorted.begin(), sorted.end());
  if (sorted.back() >= topology.num_gpus()) {
    throw std::invalid_argument("group member " + std::to_string(sorted.back()) +
                                " is not a GPU of the topology (it has " +
                                std::to_string(topology.num_gpus()) + ")");
  }
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    throw std::invalid_argument("group of " + std::string(what) + " lists a GPU twice");
  }
}

void validate(CollectiveType type, Algorithm algorithm, std::span<const EndpointId> members,
              std::uint32_t root, const Topology& topology) {
  if (algorithm == Algorithm::automatic) {
    throw std::invalid_argument("plan_collective needs a concrete algorithm for " +
                                std::string(to_string(type)) +
                                "; resolve automatic with choose_algorithm() first");
  }
  check_members(to_string(type), members, topology);
  if (root >= members.size()) {
    throw std::invalid_argument(std::string(to_string(type)) + " root index " +
                                std::to_string(root) + " is outside the group of " +
                                std::to_string(members.size()) + " members");
  }
  if (type == CollectiveType::send_recv && members.size() != 2) {
    throw std::invalid_argument("send_recv needs exactly 2 members (sender, receiver), got " +
                                std::to_string(members.size()));
  }
}

TransferPlan algorithm_plan(CollectiveType type, Algorithm algorithm,
                            std::span<const EndpointId> members, std::uint32_t root,
                            const Topology& topology, Protocol protocol) {
  if (members.size() == 1) return {};
  switch (type) {
    case CollectiveType::send_recv:
      if (algorithm != Algorithm::ring && algorithm != Algorithm::direct) {
        unsupported(type, algorithm, "send_recv is a single message (ring or direct)");
      }
      {
        // As NCCL runs ncclSend / ncclRecv on a communicator of the pair (nccl_p2p.cpp).
        const std::pair<EndpointId, EndpointId> send{members[0], members[1]};
        return nccl_sends(members, std::span(&send, 1), topology);
      }
    case CollectiveType::scatter:
    case CollectiveType::gather:
      if (algorithm != Algorithm::ring && algorithm != Algorithm::direct) {
        unsupported(type, algorithm, "scatter and gather support ring and direct");
      }
      return rooted_scatter(type, members, root, topology);
    default:
      break;
  }
  if (nccl_pair(type, algorithm))
    return nccl_transfer_plan(type, algorithm, members, topology, protocol);
  switch (algorithm) {
    case Algorithm::ring:
      return ring(type, members, root, topology);
    case Algorithm::direct:
      return direct(type, members, root, topology);
    case Algorithm::tree:
      unsupported(type, algorithm, "tree supports all_reduce only");
    case Algorithm::nvls:
    case Algorithm::collnet:
      unsupported(type, algorithm, "nvls and collnet support all_reduce only");
    case Algorithm::hierarchical:
      return hierarchical(type, members, topology);
    case Algorithm::automatic:
      break;
  }
  unsupported(type, algorithm, "unknown algorithm");
}

}  // namespace

TransferPlan plan_collective(CollectiveType type, Algorithm algorithm,
                             std::span<const EndpointId> members, std::uint32_t root,
                             const Topology& topology, Protocol protocol) {
  validate(type, algorithm, members, root, topology);
  TransferPlan plan = algorithm_plan(type, algorithm, members, root, topology, protocol);
  plan.collective = type;
  plan.ranks = static_cast<std::uint32_t>(members.size());
  plan.nodes = static_cast<std::uint32_t>(count_nodes(members, topology));
  plan.algorithm = algorithm;
  if (plan.channels == 0) plan.channels = 1;
  return plan;
}

TransferPlan plan_neighbour_sends(std::span<const EndpointId> members, const Topology& topology) {
  check_members("neighbour sends", members, topology);
  std::vector<std::pair<EndpointId, EndpointId>> sends;
  for (std::size_t i = 0; members.size() > 1 && i < members.size(); ++i)
    sends.emplace_back(members[i], members[(i + 1) % members.size()]);
  TransferPlan plan = nccl_sends(members, sends, topology);
  plan.collective = CollectiveType::send_recv;
  plan.ranks = static_cast<std::uint32_t>(members.size());
  plan.nodes = static_cast<std::uint32_t>(count_nodes(members, topology));
  plan.algorithm = Algorithm::direct;
  return plan;
}

TransferPlan plan_send(EndpointId src, EndpointId dst, std::span<const EndpointId> comm,
                       const Topology& topology) {
  const std::array<EndpointId, 2> pair{src, dst};
  if (comm.empty()) comm = pair;
  check_members("a send's communicator", comm, topology);
  if (std::find(comm.begin(), comm.end(), src) == comm.end() ||
      std::find(comm.begin(), comm.end(), dst) == comm.end() || src == dst)
    throw std::invalid_argument("a send from " + std::to_string(src) + " to " +
                                std::to_string(dst) +
                                " needs two distinct members of its communicator");
  const std::pair<EndpointId, EndpointId> send{src, dst};
  TransferPlan plan = nccl_sends(comm, std::span(&send, 1), topology);
  plan.collective = CollectiveType::send_recv;
  plan.ranks = 2;
  plan.nodes = static_cast<std::uint32_t>(count_nodes(pair, topology));
  plan.algorithm = Algorithm::direct;
  if (plan.channels == 0) plan.channels = 1;
  return plan;
}

double bus_bandwidth_factor(CollectiveType type, std::size_t n) {
  if (n == 0) throw std::invalid_argument("bus bandwidth factor of an empty group");
  const double dn = static_cast<double>(n);
  switch (type) {
    case CollectiveType::all_reduce:
      return 2.0 * (dn - 1.0) / dn;
    case CollectiveType::all_gather:
    case CollectiveType::reduce_scatter:
    case CollectiveType::all_to_all:
    case CollectiveType::scatter:  // nccl-tests scatter.cu / gather.cu: (nranks-1)/nranks
    case CollectiveType::gather:
      return (dn - 1.0) / dn;
    case CollectiveType::broadcast:
    case CollectiveType::reduce:
    case CollectiveType::send_recv:
      return 1.0;
  }
  return 1.0;
}

}  // namespace clustersim::engine
