#include "models/plans/folding.hpp"

#include <algorithm>
#include <string_view>

#include "engine/network/network_model.hpp"
#include "models/plans/sharded_data_parallel.hpp"
#include "models/plans/training_schedule.hpp"

namespace clustersim::models {

ReplicaMirror data_parallel_mirror(const Scenario& sc, const PlanContext& ctx) {
  const RankLayout& layout = ctx.layout;
  ReplicaMirror out;
  out.mirror.resize(static_cast<std::size_t>(layout.world_size()));
  out.replicas = sc.parallel.dp / std::max(1, sc.parallel.ep);
  const bool hsdp =
      sc.parallel.data_parallel == DataParallel::hsdp && sc.parallel.cp == 1 && sc.parallel.ep == 1;
  if (hsdp) {
    // Every dp group splits into shard groups of the same size (validation checked it divides dp).
    const std::size_t shard = hsdp_shard_group(ctx, 0).size();
    out.replicas = static_cast<int>(static_cast<std::size_t>(sc.parallel.dp) / shard);
    for (std::size_t r = 0; r < out.mirror.size(); ++r) {
      const auto dp = layout.dp_group(static_cast<engine::Rank>(r));
      const auto pos = static_cast<std::size_t>(
          std::find(dp.begin(), dp.end(), static_cast<engine::Rank>(r)) - dp.begin());
      out.mirror[r] = dp[pos % shard];
    }
    return out;
  }
  for (std::size_t r = 0; r < out.mirror.size(); ++r) {
    RankCoords c = layout.coords(static_cast<engine::Rank>(r));
    c.dp = 0;
    out.mirror[r] = layout.rank(c);
  }
  return out;
}

bool replicas_provably_alike(const Scenario& sc) {
  const engine::ClusterTopologySpec& t = sc.cluster.topology;
  // NVSwitch makes a node's GPUs interchangeable; one NIC (or group of rails) per GPU behind its
  // own PCIe switch gives each the same way out; one fabric switch makes every pair of nodes the
  // same distance.
  const bool gpus_alike = t.node.fabric == engine::IntraNodeFabric::nvswitch &&
                          (t.nodes == 1 || engine::nic_devices(t.node) == t.node.gpus);
  const bool nodes_alike = t.nodes == 1 || t.fabric.kind == engine::FabricKind::single_switch;
  return gpus_alike && nodes_alike;
}

bool folds_data_parallel(const Scenario& sc, std::string_view network_model) {
  if (sc.parallel.dp / std::max(1, sc.parallel.ep) < 2) return false;
  switch (sc.simulation.fold) {
    case Fold::dp:
      return true;
    case Fold::none:
      return false;
    case Fold::automatic: {
      const auto* entry = engine::find_network_model(network_model);
      return entry != nullptr && entry->contention_free && replicas_provably_alike(sc);
    }
  }
  return false;
}

bool checks_folded_run(const Scenario& sc, std::string_view network_model) {
  if (sc.simulation.fold != Fold::automatic || folds_data_parallel(sc, network_model)) return false;
  if (sc.parallel.dp / std::max(1, sc.parallel.ep) < 2) return false;
  const auto* entry = engine::find_network_model(network_model);
  return entry != nullptr && !entry->contention_free && !entry->once_per_process;
}

}  // namespace clustersim::models
