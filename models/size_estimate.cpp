#include "models/size_estimate.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <variant>

#include "engine/network/network_model.hpp"

namespace clustersim::models {
namespace {

std::string str(std::int64_t v) {
  return std::to_string(v);
}

std::string gigabytes(std::int64_t bytes) {
  char s[32];
  std::snprintf(s, sizeof s, "%.3g GB", static_cast<double>(bytes) / 1e9);
  return s;
}

// The largest group that runs a collective with all-pairs flows (n · (n − 1) at once): the expert
// all-to-all (direct unless overridden), and any collective the scenario forces to `direct` on
// the groups that certainly run it.
struct AllPairsGroup {
  std::int64_t size = 1;
  std::string key;
  std::string what;
};

AllPairsGroup largest_all_pairs_group(const Scenario& s) {
  using engine::Algorithm;
  using engine::CollectiveType;
  AllPairsGroup best;
  auto consider = [&](std::int64_t group, CollectiveType type, const std::string& group_key) {
    const Algorithm a = s.simulation.algorithms[static_cast<std::size_t>(type)];
    const bool all_pairs =
        a == Algorithm::direct || (a == Algorithm::automatic && type == CollectiveType::all_to_all);
    if (!all_pairs || group <= best.size) return;
    const std::string name(engine::to_string(type));
    best = {group, a == Algorithm::automatic ? group_key : "simulation.algorithms." + name,
            group_key + " " + str(group) + ", " + name + " direct"};
  };
  const ParallelConfig& p = s.parallel;
  consider(p.ep, CollectiveType::all_to_all, "parallel.ep");
  // Tensor parallelism all-reduces activations (or all-gathers and reduce-scatters them with
  // sequence parallelism); data parallelism all-reduces gradients (DDP) or reduce-scatters them
  // and all-gathers parameters (ZeRO, FSDP; HSDP within its shard group).
  consider(p.tp, p.sequence_parallel ? CollectiveType::all_gather : CollectiveType::all_reduce,
           "parallel.tp");
  consider(p.tp, p.sequence_parallel ? CollectiveType::reduce_scatter : CollectiveType::all_reduce,
           "parallel.tp");
  const std::int64_t replicas = p.replicas();
  if (p.data_parallel == DataParallel::ddp) {
    consider(replicas, CollectiveType::all_reduce, "data parallelism");
  } else {
    const std::int64_t shard = p.data_parallel == DataParallel::hsdp && p.fsdp.shard_group > 0
                                   ? p.fsdp.shard_group
                                   : replicas;
    consider(shard, CollectiveType::all_gather, "data parallelism");
    consider(shard, CollectiveType::reduce_scatter, "data parallelism");
  }
  return best;
}

}  // namespace

SizeEstimate estimate_size(const Scenario& s, bool folded, std::string_view network_model) {
  std::int64_t layers = 0;  // transformer blocks or list layers, repeats included
  if (const auto* t = std::get_if<TransformerSpec>(&s.model.body))
    layers = t->num_layers + 2;  // the embedding and the head
  else
    for (const LayerSpec& l : std::get<std::vector<LayerSpec>>(s.model.body))
      layers += l.repeat;
  const std::int64_t micro = s.num_microbatches();
  const std::int64_t per_stage = std::max<std::int64_t>(1, layers / s.parallel.pp);
  std::int64_t replicas = folded ? std::max(1, s.parallel.dp / s.parallel.ep) : 1;
  if (folded && s.parallel.data_parallel == DataParallel::hsdp && s.parallel.cp == 1 &&
      s.parallel.ep == 1) {
    // An HSDP fold keeps a whole shard group (training_schedule.cpp): by default the dp members
    // on one node, gpus_per_node / tp of them in Megatron's rank order (an estimate's guess).
    const int shard =
        s.parallel.fsdp.shard_group > 0
            ? s.parallel.fsdp.shard_group
            : std::clamp(s.cluster.topology.node.gpus / s.parallel.tp, 1, s.parallel.dp);
    replicas = std::max(1, s.parallel.dp / shard);
  }
  const std::int64_t ranks = s.world_size() / replicas;
  SizeEstimate e;
  e.ops = ranks * s.simulation.iterations * micro * 2 * per_stage;
  const std::string_view kind =
      network_model.empty() ? std::string_view(s.simulation.network_model) : network_model;
  const auto* entry = engine::find_network_model(kind);
  const AllPairsGroup group = largest_all_pairs_group(s);
  if (entry != nullptr && !entry->contention_free && group.size > 1) {
    e.flows = ranks * (group.size - 1);
    e.flow_key = group.key;
    e.flow_factors = str(ranks) + " ranks · " + str(group.size - 1) + " peers (" + group.what + ")";
  }
  e.events = 2 * (e.ops + e.flows);
  // The counts are bounded (ops < 2^59, flows < 2^37) but their bytes are not: saturate.
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  const double bytes =
      static_cast<double>(e.ops) * kBytesPerOp + static_cast<double>(e.flows) * kBytesPerFlow;
  e.bytes = bytes >= static_cast<double>(kMax) ? kMax : static_cast<std::int64_t>(bytes);
  e.key = s.simulation.iterations > 1 ? "simulation.iterations"
          : micro >= per_stage        ? "training.global_batch"
                                      : "model";
  e.factors = str(ranks) + (replicas > 1 ? " simulated" : "") + " ranks · " +
              str(s.simulation.iterations) + " iteration(s) · " + str(micro) +
              " micro-batches · 2 · " + str(per_stage) + " layers per stage";
  return e;
}

std::int64_t default_memory_budget() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return 0;  // unknown: no budget
  return static_cast<std::int64_t>(pages) * page_size / 2;
}

void check_memory_budget(const Scenario& s, std::int64_t max_bytes, const std::string& budget,
                         bool folded, std::string_view network_model) {
  const SizeEstimate e = estimate_size(s, folded, network_model);
  if (max_bytes <= 0 || e.bytes <= max_bytes) return;
  const std::string ops =
      str(e.ops) + " ops, " + e.factors + ", about " + str(kBytesPerOp) + " bytes each";
  const std::string over = "more than " + budget + " (" + gigabytes(max_bytes) + ")";
  // Blame whichever part is the larger: the flows of one all-pairs collective, or the ops.
  if (e.flows * kBytesPerFlow > e.ops * kBytesPerOp)
    s.fail(e.flow_key, "simulating it needs at least " + gigabytes(e.bytes) + " (" + str(e.flows) +
                           " flows in flight at once, " + e.flow_factors + ", about " +
                           str(kBytesPerFlow) + " bytes each; and " + ops + "), " + over +
                           "; allowed: a smaller group, a ring algorithm "
                           "(simulation.algorithms), network_model: analytical, or a larger "
                           "--max-memory");
  s.fail(e.key, "simulating it needs at least " + gigabytes(e.bytes) + " (" + ops + "), " + over +
                    "; allowed: fewer iterations (--set simulation.iterations=1), micro-batches "
                    "(a smaller training.global_batch) or ranks, or a larger --max-memory");
}

}  // namespace clustersim::models
