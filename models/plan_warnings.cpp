#include "models/plan_warnings.hpp"

#include <algorithm>

#include "models/plans/plan_context.hpp"
#include "models/rank_layout.hpp"

namespace clustersim::models {

namespace {

// Nodes the group of `rank` touches (rank r runs on GPU r, node-major).
int nodes_spanned(const std::vector<engine::Rank>& group, int gpus_per_node) {
  std::vector<int> nodes;
  for (engine::Rank r : group) {
    const int n = static_cast<int>(r) / gpus_per_node;
    if (std::find(nodes.begin(), nodes.end(), n) == nodes.end()) nodes.push_back(n);
  }
  return static_cast<int>(nodes.size());
}

}  // namespace

std::vector<std::string> plan_warnings(const Scenario& sc) {
  std::vector<std::string> notes;
  const auto& p = sc.parallel;
  const int gpn = sc.cluster.topology.node.gpus;
  const RankLayout layout = rank_layout(p);
  if (p.tp > 1) {
    const auto group = layout.tp_group(0);
    if (const int n = nodes_spanned(group, gpn); n > 1)
      notes.push_back("warning: parallel.tp: each TP group spans " + std::to_string(n) +
                      " nodes, so its per-layer all-reduces cross the inter-node network; keep tp "
                      "<= gpus_per_node (" +
                      std::to_string(gpn) + ") and tp fastest in parallel.order");
  }
  if (p.ep > 1) {
    const auto group = layout.ep_group(0);
    if (const int n = nodes_spanned(group, gpn); n > 1)
      notes.push_back("parallel.ep: each EP group spans " + std::to_string(n) +
                      " nodes; its all-to-alls go over the NICs");
  }
  return notes;
}

}  // namespace clustersim::models
