// The size checks of a scenario (docs/scenario.md "Limits"): products of counts that no single
// key bounds (world size, tokens per micro-batch, fabric links, experts over layers, micro-batches,
// the schedule's size), computed in 64 bits and checked against models/limits.hpp before anything
// allocates per rank, per op or per link. The readers bound every single count already, so none
// of these products can overflow 64 bits.
#include <algorithm>
#include <string>

#include "models/scenario_detail.hpp"
#include "models/size_estimate.hpp"

namespace clustersim::models::detail {
namespace {

// The key the user wrote among `keys`, else the first (blamed on its section).
std::string written(const Scenario& s, std::initializer_list<const char*> keys) {
  for (const char* k : keys)
    if (s.locations.count(k) != 0) return k;
  return *keys.begin();
}

void check_bound(const Scenario& s, const std::string& key, std::int64_t value, std::int64_t max,
                 const std::string& what) {
  if (value > max)
    s.fail(key, what + " = " + str(value) + " exceeds the limit of " + str(max) +
                    " (docs/scenario.md \"Limits\"); allowed: at most " + str(max));
}

void check_transformer(const Scenario& s, const TransformerSpec& t) {
  // Presets and config.json files are not read through the key readers: bound them here too.
  check_bound(s, "model.num_layers", t.num_layers, limits::kLayers, "num_layers");
  check_bound(s, "model.hidden_size", t.hidden_size, limits::kHidden, "hidden_size");
  check_bound(s, "model.ffn_hidden_size", t.ffn_hidden_size, limits::kHidden, "ffn_hidden_size");
  check_bound(s, "model.num_heads", t.num_heads, limits::kHidden, "num_heads");
  check_bound(s, "model.vocab_size", t.vocab_size, limits::kVocab, "vocab_size");
  check_bound(s, "model.max_positions", t.max_positions, limits::kPositions, "max_positions");
  const std::int64_t tokens =
      static_cast<std::int64_t>(s.training.micro_batch) * s.training.seq_len;
  check_bound(s, written(s, {"training.micro_batch", "training.seq_len"}), tokens,
              limits::kTokensPerMicroBatch, "tokens per micro-batch (micro_batch · seq_len)");
  if (!t.moe) return;
  const MoeSpec& m = *t.moe;
  check_bound(s, "model.moe.num_experts", m.num_experts, limits::kExperts, "num_experts");
  check_bound(s, "model.moe.expert_ffn_hidden_size", m.expert_ffn_hidden_size, limits::kHidden,
              "expert_ffn_hidden_size");
  const std::int64_t moe_layers = std::max(0, t.num_layers - m.first_dense) / std::max(1, m.every);
  check_bound(s, "model.moe.num_experts", static_cast<std::int64_t>(m.num_experts) * moe_layers,
              limits::kExpertsTimesLayers,
              "experts over all MoE layers (num_experts · MoE layers)");
}

void check_fabric(const Scenario& s) {
  const auto& topo = s.cluster.topology;
  if (s.cluster.nodes <= 1 || topo.fabric.kind == engine::FabricKind::single_switch) return;
  // As the builder places them: a leaf holds the whole NIC devices (a GPU's rails) that fit.
  const std::int64_t devices = s.world_size() / topo.node.gpus * engine::nic_devices(topo.node);
  const std::int64_t per_leaf = std::max(1, engine::nic_devices_per_leaf(topo.node, topo.fabric));
  const std::int64_t leaves = topo.fabric.kind == engine::FabricKind::fat_tree
                                  ? (devices + per_leaf - 1) / per_leaf
                                  : engine::nic_devices(topo.node);
  check_bound(
      s, written(s, {"cluster.network.spines", "cluster.network.nics_per_leaf"}),
      leaves * topo.fabric.spines, limits::kFabricLinks,
      "leaf-to-spine links (" + str(leaves) + " leaves · " + str(topo.fabric.spines) + " spines)");
  if (topo.fabric.leaves_per_pod <= 0) return;
  const std::int64_t pods = (leaves + topo.fabric.leaves_per_pod - 1) / topo.fabric.leaves_per_pod;
  check_bound(s, written(s, {"cluster.network.cores", "cluster.network.spines"}),
              pods * topo.fabric.spines * topo.fabric.cores, limits::kFabricLinks,
              "spine-to-core links (" + str(pods) + " pods · " + str(topo.fabric.spines) +
                  " spines · " + str(topo.fabric.cores) + " cores)");
}

}  // namespace

void check_counts(const Scenario& s) {
  const std::int64_t world = s.world_size();
  if (world > limits::kWorld)
    s.fail(written(s, {"cluster.nodes", "cluster.gpus_per_node"}),
           "the world size nodes · gpus_per_node = " + str(s.cluster.nodes) + " · " +
               str(s.cluster.topology.node.gpus) + " = " + str(world) +
               " GPUs exceeds the limit of " + str(limits::kWorld) +
               " (docs/scenario.md \"Limits\"); allowed: at most " + str(limits::kWorld) + " GPUs");
  check_fabric(s);
  if (s.workload.from_chakra()) return;  // no model: the traces' size is checked as they load
  if (const auto* t = std::get_if<TransformerSpec>(&s.model.body)) {
    check_transformer(s, *t);
  } else {
    std::int64_t layers = 0;
    for (const LayerSpec& l : std::get<std::vector<LayerSpec>>(s.model.body)) {
      layers += l.repeat;
      check_bound(s, "model.layers", layers, limits::kLayers, "layers (repeats included)");
    }
  }
}

void check_sizes(const Scenario& s) {
  check_bound(s, "training.global_batch", s.num_microbatches(), limits::kMicroBatches,
              "micro-batches per iteration (global_batch / (micro_batch · dp))");
  // A lower bound of the schedule's size (models/size_estimate.hpp), so exceeding it is certain.
  const SizeEstimate e = estimate_size(s);
  if (e.ops > limits::kOps)
    s.fail(e.key, "the schedule would have at least " + str(e.ops) + " ops (" + e.factors +
                      "), more than the limit of " + str(limits::kOps) +
                      " (about 7.5 GB to simulate); allowed: fewer iterations "
                      "(--set simulation.iterations=1), micro-batches (a smaller "
                      "training.global_batch) or ranks");
}

}  // namespace clustersim::models::detail
