#include "models/offload.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "models/rank_layout.hpp"

namespace clustersim::models {

double optimizer_step_bytes_per_param(const TrainingConfig& training) {
  if (training.optimizer != Optimizer::sgd) return 28.0;
  return training.momentum > 0 ? 20.0 : 12.0;
}

OptimizerOffload optimizer_offload(const TrainingConfig& training, double params) {
  const double param_bytes = training.amp ? 4.0 : stored_element_bytes(training.precision);
  const double grad_bytes =
      training.grad_reduce_dtype ? bytes_per_element(*training.grad_reduce_dtype) : param_bytes;
  OptimizerOffload o;
  o.gradients_down = params * grad_bytes;
  o.params_up = params * param_bytes;
  o.cpu_step_bytes = params * optimizer_step_bytes_per_param(training);
  return o;
}

double optimizer_host_bytes(const MemoryBreakdown& states, double gradient_bytes) {
  return states.optimizer + states.stepped_params * gradient_bytes;
}

double host_bytes_per_node(const Scenario& sc, const std::vector<double>& host_per_stage) {
  const RankLayout layout = rank_layout(sc.parallel);
  const int gpus = sc.cluster.topology.node.gpus;
  double most = 0;
  for (int node = 0; node < sc.cluster.nodes; ++node) {
    double sum = 0;
    for (int g = 0; g < gpus; ++g) {
      const auto rank = static_cast<engine::Rank>(node * gpus + g);
      const auto stage = static_cast<std::size_t>(layout.coords(rank).pp);
      if (stage < host_per_stage.size()) sum += host_per_stage[stage];
    }
    most = std::max(most, sum);
  }
  return most;
}

bool offloads_activations(const PlanContext& ctx, int layer) {
  if (!ctx.parallel.offload.activations) return false;
  return ctx.transformer == nullptr || ctx.layers[static_cast<std::size_t>(layer)].block >= 0;
}

OffloadActivity offload_activity(const engine::Schedule& s, const engine::Timeline& tl,
                                 std::span<const engine::OpId> rank_ops) {
  OffloadActivity a;
  for (const engine::OpId id : rank_ops) {
    const engine::Op& op = s.ops[id];
    // launch: a compute op's and a host copy's (an instance of its own) is its start, which a
    // run may not record (SimulationOptions::record_starts).
    const double seconds = (tl.end[id] - tl.launch[id]).seconds();
    if (engine::is_host_copy(op)) {
      const bool down = op.tag() == static_cast<std::uint32_t>(engine::CopyDirection::to_host);
      (down ? a.to_host_bytes : a.from_host_bytes) += static_cast<double>(op.bytes);
      (down ? a.to_host_s : a.from_host_s) += seconds;
    } else if (op.kind == engine::OpKind::compute && op.kernels < s.kernels.size()) {
      const auto list = s.kernels.list(op.kernels);
      if (!list.empty() && list.front().kind == engine::KernelKind::host_memory)
        a.host_step_s += seconds;
    }
  }
  return a;
}

namespace detail {

void validate_offload(const Scenario& s) {
  const OffloadConfig& o = s.parallel.offload;
  if (!o.any()) return;
  const std::string what =
      o.optimizer ? "parallel.offload.optimizer" : "parallel.offload.activations";
  if (o.optimizer && s.parallel.data_parallel == DataParallel::ddp)
    s.fail("parallel.offload.optimizer",
           "optimizer offload is ZeRO-Offload (DeepSpeed offload_optimizer with ZeRO stage 1, 2 "
           "or 3) or FSDP's CPUOffload, which step the optimizer's shard on the CPU, but "
           "parallel.data_parallel is ddp; allowed: data_parallel zero1, zero2, zero3, fsdp or "
           "hsdp, or false");
  if (!(s.cluster.host.memory_bytes > 0))
    s.fail("cluster.host.memory",
           what +
               " puts tensors in host memory, whose size the node does not state; give "
               "cluster.host.memory (e.g. 2TB) or use a node preset that has it "
               "(clustersim presets nodes)");
  if (o.optimizer && !(s.cluster.host.memory_bandwidth > 0))
    s.fail("cluster.host.memory_bandwidth",
           "parallel.offload.optimizer steps the optimizer on the CPU at the host's memory "
           "bandwidth, which the node does not state; give cluster.host.memory_bandwidth (e.g. "
           "409.6GB/s: 16 channels of DDR4-3200)");
}

}  // namespace detail

std::vector<double> measured_offload_windows(const Scenario& sc, const BuiltSchedule& built,
                                             const engine::Timeline& timeline) {
  if (!sc.parallel.offload.activations) return {};
  const engine::Schedule& s = built.schedule;
  // A layer's offloaded bytes are on the GPU from its forward's end (the d2h copy's dependency)
  // to the copy's end, and again from its reload's start to the end of its backward.
  using Key = std::tuple<engine::Rank, std::string, std::uint32_t>;
  auto layer_of = [&](const engine::Op& op) {
    const std::string& name = s.name_of(op);
    return name.substr(0, name.find(' '));
  };
  std::map<Key, engine::Time> backward_end;
  for (engine::OpId id = 0; id < s.ops.size(); ++id) {
    const engine::Op& op = s.ops[id];
    if (op.kind != engine::OpKind::compute || op.category != engine::Category::backward) continue;
    engine::Time& t = backward_end[Key{op.rank, layer_of(op), op.microbatch()}];
    t = std::max(t, timeline.end[id]);
  }
  std::map<engine::Rank, std::vector<std::pair<engine::Time, double>>> changes;
  for (engine::OpId id = 0; id < s.ops.size(); ++id) {
    const engine::Op& op = s.ops[id];
    if (!engine::is_host_copy(op)) continue;
    const std::string& name = s.name_of(op);
    const double bytes = static_cast<double>(op.bytes);
    auto& rank = changes[op.rank];
    if (name.ends_with(kActivationToHost) && op.deps_count > 0) {
      rank.emplace_back(timeline.end[s.dependencies(op).front()], bytes);
      rank.emplace_back(timeline.end[id], -bytes);
    } else if (name.ends_with(kActivationFromHost)) {
      const auto it = backward_end.find(Key{op.rank, layer_of(op), op.microbatch()});
      if (it == backward_end.end()) continue;
      rank.emplace_back(timeline.launch[id], bytes);
      rank.emplace_back(it->second, -bytes);
    }
  }
  const RankLayout layout = rank_layout(sc.parallel);
  std::vector<double> windows(static_cast<std::size_t>(sc.parallel.pp), 0.0);
  for (auto& [rank, list] : changes) {
    // Frees before allocations at one instant: a copy that ends as the next starts.
    std::sort(list.begin(), list.end());
    double now = 0, most = 0;
    for (const auto& [at, delta] : list) {
      now += delta;
      most = std::max(most, now);
    }
    double& w = windows[static_cast<std::size_t>(layout.coords(rank).pp)];
    w = std::max(w, most);
  }
  return windows;
}

}  // namespace clustersim::models
