#include "gui/models/topology_layout.hpp"

#include <QStringList>
#include <algorithm>
#include <map>
#include <numeric>

namespace clustersim::gui {

int tier_of(engine::VertexKind kind) {
  switch (kind) {
    case engine::VertexKind::core_switch:
      return 0;
    case engine::VertexKind::spine_switch:
      return 1;
    case engine::VertexKind::leaf_switch:
      return 2;
    case engine::VertexKind::nic:
      return 3;
    case engine::VertexKind::cpu:
      return 4;
    case engine::VertexKind::pcie_switch:
      return 5;
    case engine::VertexKind::nvswitch:
      return 6;
    case engine::VertexKind::gpu:
      return 7;
  }
  return kNumTiers - 1;
}

TopologyLayout layout_topology(const engine::Topology& topology,
                               const std::vector<double>& link_bytes, double iteration_s,
                               int iterations) {
  TopologyLayout layout;
  const auto count = static_cast<engine::VertexId>(topology.num_vertices());
  layout.vertices.resize(count);
  layout.tier_sizes.assign(kNumTiers, 0);
  // Tier by tier, vertices in node order (fabric switches, node -1, first), then by id.
  std::vector<engine::VertexId> order(count);
  std::iota(order.begin(), order.end(), engine::VertexId{0});
  auto key = [&](engine::VertexId v) {
    const auto& info = topology.vertex(v);
    return std::tuple{tier_of(info.kind), info.node, v};
  };
  std::sort(order.begin(), order.end(),
            [&](engine::VertexId a, engine::VertexId b) { return key(a) < key(b); });
  for (const engine::VertexId v : order)
    ++layout.tier_sizes[static_cast<std::size_t>(tier_of(topology.vertex(v).kind))];
  std::vector<int> placed(kNumTiers, 0);
  for (const engine::VertexId v : order) {
    const int tier = tier_of(topology.vertex(v).kind);
    const auto t = static_cast<std::size_t>(tier);
    layout.vertices[v] = {v, tier, (placed[t]++ + 0.5) / layout.tier_sizes[t]};
  }

  // Cables: the directed links between one pair of vertices.
  std::map<std::pair<engine::VertexId, engine::VertexId>, std::size_t> cable_of;
  const double per_iteration = 1.0 / std::max(1, iterations);
  for (engine::LinkId l = 0; l < topology.num_links(); ++l) {
    const auto& link = topology.link(l);
    const auto ends = std::minmax(link.src, link.dst);
    auto [it, added] = cable_of.emplace(ends, layout.cables.size());
    if (added) layout.cables.push_back({ends.first, ends.second, {}, 0, 0, 0});
    PlacedCable& cable = layout.cables[it->second];
    cable.links.push_back(l);
    const double bytes = l < link_bytes.size() ? link_bytes[l] * per_iteration : 0.0;
    cable.bytes += bytes;
    const double busy = bytes / link.bandwidth.bytes_per_second();
    cable.busy_s = std::max(cable.busy_s, busy);
    if (iteration_s > 0) cable.utilization = std::max(cable.utilization, busy / iteration_s);
  }
  return layout;
}

QString cables_csv(const engine::Topology& topology, const TopologyLayout& layout) {
  QString out = QStringLiteral("a,b,kind,bandwidth_bytes_per_s,bytes,busy_s,utilization\n");
  for (const PlacedCable& cable : layout.cables) {
    const auto& link = topology.link(cable.links.front());
    const auto kind = engine::to_string(link.kind);
    out += QStringList{QString::fromStdString(topology.vertex(cable.a).name),
                       QString::fromStdString(topology.vertex(cable.b).name),
                       QString::fromUtf8(kind.data(), static_cast<qsizetype>(kind.size())),
                       QString::number(link.bandwidth.bytes_per_second(), 'g', 12),
                       QString::number(cable.bytes, 'g', 12),
                       QString::number(cable.busy_s, 'g', 12),
                       QString::number(cable.utilization, 'g', 12)}
               .join(',') +
           '\n';
  }
  return out;
}

}  // namespace clustersim::gui
