#include "models/memory_model.hpp"

#include <algorithm>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>
#include <variant>

#include "models/memory_overheads.hpp"
#include "models/memory_suggestions.hpp"
#include "models/offload.hpp"
#include "models/plans/activation_memory.hpp"
#include "models/plans/expert_parallelism.hpp"
#include "models/plans/layer_kernels.hpp"
#include "models/plans/pipeline_order.hpp"
#include "models/plans/stage_partition.hpp"
#include "models/plans/tensor_parallelism.hpp"
#include "models/rank_layout.hpp"

namespace clustersim::models {

namespace {

// ---- One estimate's parts ---------------------------------------------------------------

struct Parts {
  Parts(const Scenario& s, std::vector<LayerCost> l, std::vector<std::vector<int>> p)
      : sc(s),
        layers(std::move(l)),
        partition(std::move(p)),
        layout(rank_layout(s.parallel)),
        ctx(plan_context(s, layers, partition, layout)),
        tp(ctx),
        kernels(ctx, table, ctx.num_experts() > 0 ? ExpertParallelism(ctx).routed_copies() : 0.0),
        activations(ctx, ctx.transformer != nullptr ? &kernels.config() : nullptr),
        data_parallel(make_data_parallel(s.parallel.data_parallel, ctx, tp, nullptr)) {}

  const Scenario& sc;
  std::vector<LayerCost> layers;
  std::vector<std::vector<int>> partition;
  RankLayout layout;
  PlanContext ctx;
  TensorParallelism tp;
  engine::KernelTable table;
  LayerKernels kernels;
  ActivationMemory activations;
  std::unique_ptr<DataParallelStrategy> data_parallel;
  // parallel.offload.activations: per stage, the most offloaded bytes a simulated GPU held at once
  // (measured_offload_windows); empty without a simulation.
  std::vector<double> offload_windows;

  bool full_shard() const {
    const auto k = sc.parallel.data_parallel;
    return k == DataParallel::zero3 || k == DataParallel::fsdp || k == DataParallel::hsdp;
  }
  // Gradients live from one step into the next: in one persistent buffer (DDP's buckets as
  // gradient views), or zeroed in place by zero_grad(set_to_none=False).
  bool persistent_gradients() const {
    if (!sc.training.set_to_none) return true;
    return sc.parallel.data_parallel == DataParallel::ddp && sc.parallel.gradient_as_bucket_view &&
           sc.parallel.replicas() > 1;
  }
  // Autocast's 16-bit copy of each weight of layer `li` (gathered, on this rank): cached at the
  // layer's first forward op and saved by its matmuls until the layer's backward.
  double weight_copy(int li) const {
    if (!sc.training.amp) return 0;
    return local_params(li) * ctx.element_bytes();
  }
  // fp8 training with whole parameters on each rank (DDP, ZeRO-1/2): Transformer Engine caches
  // each block GEMM weight's fp8 cast and its transpose across micro-batches
  // (fp8_cast_transpose, is_first_microbatch): 2 bytes per parameter, for the whole run. The
  // embedding and the head stay bf16 (Megatron's output layer). Sharded parameters (ZeRO-3,
  // FSDP) are cast as they are gathered and keep no cache.
  double fp8_weight_cache(int stage) const {
    const DataParallel d = sc.parallel.data_parallel;
    if (sc.training.precision != Precision::fp8 ||
        (d != DataParallel::ddp && d != DataParallel::zero1 && d != DataParallel::zero2))
      return 0;
    double bytes = 0;
    ctx.for_each_stage_layer(stage, [&](int li) {
      const LayerRole role = layers[static_cast<std::size_t>(li)].role;
      if (role != LayerRole::embedding && role != LayerRole::head) bytes += 2.0 * local_params(li);
    });
    return bytes;
  }
  // The data-parallel plan's model states of `stage` on its ranks, with fp8's weight cache.
  MemoryBreakdown stage_states(int stage) const {
    MemoryBreakdown states = data_parallel->memory(stage);
    states.weights += fp8_weight_cache(stage);
    if (sc.parallel.offload.optimizer) states.optimizer = 0;  // in host memory (host_bytes)
    return states;
  }
  // What a rank of `stage` keeps in host memory (parallel.offload, docs/memory.md "Host memory").
  double host_bytes(int stage) const {
    if (!sc.parallel.offload.optimizer) return 0;
    return optimizer_host_bytes(data_parallel->memory(stage), ctx.gradient_bytes());
  }
  // Parameters of layer `li` on its rank (÷ tp for a transformer but its replicated tensors,
  // routed experts ÷ ep).
  double local_params(int li) const {
    const int t = ctx.transformer != nullptr ? sc.parallel.tp : 1;
    double local = 0;
    for (const auto& x : layers[static_cast<std::size_t>(li)].tensors)
      local += tp_local_count(x, t) / (x.expert >= 0 ? sc.parallel.ep : 1);
    return local;
  }
  // Buffers the run keeps for its activation exchanges: the pipeline's and TP overlap's.
  double exchange_buffers() const {
    const double userbuffers = static_cast<double>(tp.userbuffer_bytes());
    if (sc.parallel.pp <= 1) return userbuffers;
    // A send and a receive buffer of one micro-batch's boundary activation in each direction
    // (activations and gradients); dualpipe's two pipelines each have their own.
    const LayerCost& any = layers.front();
    const double pipelines = sc.parallel.schedule == PipelineSchedule::dualpipe ? 2 : 1;
    return userbuffers + pipelines * 4.0 * static_cast<double>(tp.boundary_bytes(any));
  }
  // Gradient bytes of each layer of `stage` on its rank: `stage_gradients` shared out by the
  // layer's local parameters.
  std::map<int, double> layer_gradients(int stage, double stage_gradients) const {
    std::map<int, double> out;
    double total = 0;
    ctx.for_each_stage_layer(stage, [&](int li) {
      const double local = local_params(li);
      out[li] = local;
      total += local;
    });
    for (auto& [li, v] : out)
      v = total > 0 ? v / total * stage_gradients : 0.0;
    return out;
  }
  // The gradient bytes of `stage` that appear layer by layer at their first backward: all of
  // them, or beyond a persistent buffer only what accumulates unsharded (FSDP's no_sync).
  std::map<int, double> lazy_gradients(int stage, const MemoryBreakdown& states) const {
    const double accumulated = data_parallel->accumulated_gradients(stage);
    return layer_gradients(stage, persistent_gradients()
                                      ? std::max(0.0, accumulated - states.gradients)
                                      : accumulated);
  }
  // The optimizer step's temporaries: torch's foreach implementation "uses ~ sizeof(params) more
  // peak memory" (torch.optim docs), in the dtype it steps (fp32 master, or the weights'); fused
  // and per-tensor loops work in place. Counted per list torch allocates (torch/optim/adam.py and
  // sgd.py, _multi_tensor_*): Adam's and AdamW's sqrt(v) list; sgd's and adam's L2 weight decay,
  // `grads = torch._foreach_add(grads, params, alpha=weight_decay)`, out of place; AdamW decays
  // the parameters in place, and SGD's momentum update works on its buffers in place.
  double optimizer_temporaries(const MemoryBreakdown& m) const {
    const TrainingConfig& t = sc.training;
    if (t.optimizer_impl != OptimizerImpl::foreach || sc.parallel.offload.optimizer) return 0;
    const bool l2 = t.weight_decay > 0 && t.optimizer != Optimizer::adamw;
    const double lists = (t.optimizer == Optimizer::sgd ? 0.0 : 1.0) + (l2 ? 1.0 : 0.0);
    return lists * m.stepped_params * (keeps_master_weights(t) ? 4.0 : ctx.element_bytes());
  }
  MemoryOverheads overheads(engine::Rank rank) const {
    MemoryOverheads o;
    o.cuda_context = sc.simulation.memory.cuda_context >= 0 ? sc.simulation.memory.cuda_context
                                                            : kCudaContextBytes;
    o.workspaces = cublas_workspaces(sc.cluster.gpu);
    const auto& p = sc.parallel;
    std::vector<Communicator> comms;
    if (p.tp > 1) comms.push_back({layout.tp_group(rank), 2});
    if (p.replicas() > 1) comms.push_back({layout.dp_group(rank), 2});
    if (p.cp > 1) comms.push_back({layout.cp_group(rank), 2});
    if (p.pp > 1) comms.push_back({layout.pp_group(rank), 2, true});
    if (p.ep > 1) {
      comms.push_back({layout.ep_group(rank), std::max(2, p.ep - 1)});
      comms.push_back({layout.expert_dp_group(rank), 2});
    }
    o.nccl = nccl_bytes(sc, comms);
    return o;
  }
};

std::string step_name(bool forward, int microbatch, int microbatches, const std::string& layer) {
  return std::string(forward ? "forward of " : "backward of ") + layer + ", micro-batch " +
         std::to_string(microbatch + 1) + " of " + std::to_string(microbatches);
}

struct StageResult {
  MemoryBreakdown peak;
  std::string phase;
  double saved_peak = 0;
  double model_states = 0;
  double host_activations = 0;  // parallel.offload.activations: the most offloaded at once
};

// Walks stage `stage`'s pipeline order layer by layer (see the header).
StageResult walk_stage(const Parts& parts, int stage) {
  const auto& p = parts.sc.parallel;
  const PlanContext& ctx = parts.ctx;
  const ActivationMemory& act = parts.activations;
  const MemoryBreakdown states = parts.stage_states(stage);
  const bool persistent = parts.persistent_gradients();
  const auto grads = parts.lazy_gradients(stage, states);
  const double buffers = states.buffers + parts.exchange_buffers();

  StageResult r;
  r.model_states = states.weights + states.gradients + states.optimizer;
  double live = 0, saved_live = 0, live_grads = persistent ? states.gradients : 0.0;
  double copies = 0;  // autocast's 16-bit weight copies held for backward
  // Activation offload: the offloaded layers' saved bytes, of which the GPU holds a window.
  double offloaded = 0, window = 0;
  for (int li = 0; li < static_cast<int>(ctx.layers.size()); ++li)
    if (offloads_activations(ctx, li)) window = std::max(window, act.at(li).kept);
  window *= kActivationOffloadWindow;
  // The window assumes the copies keep pace with the compute; where the simulation had more on
  // the GPU at once (copies slower than the forward), that is what the GPU holds.
  if (static_cast<std::size_t>(stage) < parts.offload_windows.size())
    window = std::max(window, parts.offload_windows[static_cast<std::size_t>(stage)]);
  auto offload = [&](int li, double sign) {
    if (!offloads_activations(ctx, li)) return;
    offloaded += sign * act.at(li).kept;
    r.host_activations = std::max(r.host_activations, offloaded);
  };
  std::set<int> has_gradient;
  double best = -1;
  auto consider = [&](double activations, double transient_buffers, const std::string& phase) {
    MemoryBreakdown m;
    m.weights = states.weights + copies;
    m.optimizer = states.optimizer;
    m.gradients = live_grads;
    m.activations = activations - std::max(0.0, offloaded - window);
    m.buffers = buffers + transient_buffers;
    if (m.total() > best) {
      best = m.total();
      r.peak = m;
      r.phase = phase;
    }
  };

  const auto steps = pipeline_order(p.schedule, stage, p.pp, ctx.microbatches, p.chunks_per_rank(),
                                    p.microbatch_group);
  // Zero-bubble schedules: B frees what the layer recomputed or made on the way; the saved
  // tensors (the linear layers' inputs among them) stay until W has used them.
  const bool split = splits_backward(p.schedule);
  for (const auto& step : steps) {
    const auto& chunk = ctx.chunks[static_cast<std::size_t>(step.chunk * p.pp + stage)];
    if (step.weight) {
      for (auto it = chunk.rbegin(); it != chunk.rend(); ++it) {
        const LayerActivation& a = act.at(*it);
        live -= a.kept;
        saved_live -= a.kept;
        offload(*it, -1);
        copies -= parts.weight_copy(*it);
        if (has_gradient.insert(*it).second) live_grads += grads.at(*it);
      }
      continue;
    }
    if (step.forward) {
      for (int li : chunk) {
        const LayerActivation& a = act.at(li);
        live += a.kept;
        saved_live += a.kept;
        offload(li, +1);
        copies += parts.weight_copy(li);
        consider(live + a.transient_forward, 0,
                 step_name(true, step.microbatch, ctx.microbatches,
                           ctx.layers[static_cast<std::size_t>(li)].name));
      }
      r.saved_peak = std::max(r.saved_peak, saved_live);
      continue;
    }
    // Backward, last layer first. A checkpointed group (full: one block, or recompute_num_layers
    // of them under recompute_method uniform; selective_op: one block) is recomputed whole
    // before the backward of its last layer; selective recomputes each attention core.
    const bool whole_block = act.policy() == kernels::RecomputePolicy::full ||
                             act.policy() == kernels::RecomputePolicy::selective_op;
    for (auto it = chunk.rbegin(); it != chunk.rend(); ++it) {
      const int li = *it;
      const LayerCost& l = ctx.layers[static_cast<std::size_t>(li)];
      if (const int group = act.group(li); whole_block && group >= 0) {
        const bool group_end = it == chunk.rbegin() || act.group(*std::prev(it)) != group;
        if (group_end)
          for (auto jt = it; jt != chunk.rend() && act.group(*jt) == group; ++jt)
            live += act.at(*jt).full - act.at(*jt).kept;
      } else if (!whole_block) {
        live += act.at(li).full - act.at(li).kept;
      }
      const LayerActivation& a = act.at(li);
      consider(live + a.transient_backward,
               parts.data_parallel->backward_gradient_buffers(stage, li),
               step_name(false, step.microbatch, ctx.microbatches, l.name));
      if (split) {
        live -= a.full - a.kept;  // the rest at W
        continue;
      }
      live -= a.full;
      saved_live -= a.kept;
      offload(li, -1);
      copies -= parts.weight_copy(li);
      if (has_gradient.insert(li).second) live_grads += grads.at(li);
    }
  }
  // The optimizer step: all gradients (sharded by then), the optimizer's temporaries; no
  // activations, and FSDP's gathered units are resharded.
  MemoryBreakdown m;
  m.weights = states.weights;
  m.gradients = states.gradients;
  m.optimizer = states.optimizer;
  m.buffers = (parts.full_shard() ? 0.0 : states.buffers) + parts.exchange_buffers() +
              parts.optimizer_temporaries(states);
  if (m.total() > best) {
    r.peak = m;
    r.phase = "optimizer step";
  }
  return r;
}

// Start-up's peak, and the segments it leaves cached that training's tensors cannot reuse: the
// flat tensors that found no room in them (`uncarvable`) take new segments, everything else
// (the placed flat tensors, activations, workspaces) is carved from them. Never more than the
// GPU gives the allocator: a failing cudaMalloc frees the cached segments and retries.
void account_startup(const StartupMemory& startup, MemoryEstimate& est) {
  est.startup_peak = startup.peak;
  if (startup.cached <= 0) return;
  const MemoryBreakdown& m = est.peak;
  const double large =
      std::min(startup.uncarvable, m.weights + m.gradients + m.optimizer + m.buffers);
  const double small = est.allocated() - large;
  const double beyond = est.capacity - est.overheads.cuda_context - est.overheads.nccl -
                        est.allocated() - est.overheads.fragmentation;
  est.overheads.startup_cache = std::clamp(startup.cached - small, 0.0, std::max(0.0, beyond));
}

std::vector<LayerCost> layers_of(const Scenario& sc) {
  return expand_model(sc.model, std::max(1, sc.training.seq_len));
}

MemoryEstimate estimate(const Scenario& sc, std::vector<LayerCost> layers,
                        std::vector<std::vector<int>> partition,
                        std::vector<double> offload_windows = {}) {
  Parts parts(sc, std::move(layers), std::move(partition));
  parts.offload_windows = std::move(offload_windows);
  MemoryEstimate est;
  est.capacity = sc.cluster.gpu.memory_bytes;
  est.fragmentation_share = sc.simulation.memory.fragmentation;
  double best = -1;
  for (int stage = 0; stage < sc.parallel.pp; ++stage) {
    const StageResult s = walk_stage(parts, stage);
    est.per_stage.push_back(s.peak);
    est.per_stage_phase.push_back(s.phase);
    est.per_stage_saved_activations.push_back(s.saved_peak);
    est.host_per_stage.push_back(parts.host_bytes(stage) + s.host_activations);
    if (s.peak.total() > best) {
      best = s.peak.total();
      est.peak = s.peak;
      est.phase = s.phase;
      est.peak_stage = stage;
      est.model_states = s.model_states;
    }
  }
  RankCoords c;
  c.pp = est.peak_stage;
  est.peak_rank = parts.layout.rank(c);
  est.overheads = parts.overheads(est.peak_rank);
  est.host_capacity = sc.cluster.host.memory_bytes;
  est.host_per_node = host_bytes_per_node(sc, est.host_per_stage);
  est.overheads.fragmentation = est.fragmentation_share * est.allocated();
  // Start-up's cache is the peak stage's; its own peak may be on another stage.
  double startup_peak = 0;
  for (int stage = 0; stage < sc.parallel.pp; ++stage) {
    const StartupMemory startup = parts.data_parallel->startup_memory(stage);
    if (stage == est.peak_stage) account_startup(startup, est);
    startup_peak = std::max(startup_peak, startup.peak);
  }
  est.startup_peak = startup_peak;
  return est;
}

}  // namespace

std::string_view to_string(MemoryVerdict v) {
  switch (v) {
    case MemoryVerdict::fits:
      return "fits";
    case MemoryVerdict::tight:
      return "tight";
    case MemoryVerdict::does_not_fit:
      return "does not fit";
  }
  return "";
}

bool MemoryEstimate::host_fits() const {
  return host_per_node <= 0 || host_per_node <= host_capacity;
}

MemoryVerdict MemoryEstimate::verdict() const {
  if (!fits()) return MemoryVerdict::does_not_fit;
  return total() + overheads.fragmentation <= capacity &&
                 startup_total() + fragmentation_share * startup_peak <= capacity
             ? MemoryVerdict::fits
             : MemoryVerdict::tight;
}

bool MemoryEstimate::a_change_alone_fits() const {
  return std::any_of(suggestions.begin(), suggestions.end(), [](const MemorySuggestion& s) {
    return s.verdict == to_string(MemoryVerdict::fits);
  });
}

std::string MemoryCombination::as_set_flags() const {
  std::string flags;
  for (const auto& c : changes)
    flags += (flags.empty() ? "--set " : " --set ") + c;
  return flags;
}

std::string MemoryEstimate::largest_term() const {
  const std::pair<const char*, double> terms[] = {{"weights", peak.weights},
                                                  {"gradients", peak.gradients},
                                                  {"optimizer", peak.optimizer},
                                                  {"activations", peak.activations},
                                                  {"buffers", peak.buffers}};
  return std::max_element(std::begin(terms), std::end(terms),
                          [](const auto& a, const auto& b) { return a.second < b.second; })
      ->first;
}

MemoryEstimate estimate_memory_only(const Scenario& sc) {
  auto layers = layers_of(sc);
  auto partition = partition_layers(sc.parallel, layers);
  return estimate(sc, std::move(layers), std::move(partition));
}

MemoryEstimate estimate_memory_only(const Scenario& sc, const BuiltSchedule& built) {
  return estimate(sc, built.layers, built.partition);
}

MemoryEstimate estimate_memory(const Scenario& sc, const BuiltSchedule& built,
                               std::vector<double> offload_windows) {
  MemoryEstimate est = estimate(sc, built.layers, built.partition, std::move(offload_windows));
  if (est.verdict() != MemoryVerdict::fits) {
    est.suggestions = memory_suggestions(sc);
    // Also when a change alone fits only without the fragmentation allowance (tight).
    if (!est.a_change_alone_fits()) est.combined = memory_combination(sc);
  }
  return est;
}

std::vector<MemoryPoint> memory_timeline(const Scenario& sc, const BuiltSchedule& built,
                                         const engine::Timeline& timeline, engine::Rank rank,
                                         std::span<const engine::OpId> rank_ops) {
  const Parts parts(sc, built.layers, built.partition);
  const int stage = parts.layout.coords(rank).pp;
  const MemoryBreakdown states = parts.stage_states(stage);
  const bool persistent = parts.persistent_gradients();
  const auto grads = parts.lazy_gradients(stage, states);
  const MemoryOverheads o = parts.overheads(rank);
  // FSDP's unsharded gradients before their reduce-scatter count as a constant here.
  const double base = states.weights + states.optimizer + states.buffers +
                      parts.data_parallel->backward_gradient_buffers(stage, -1) +
                      parts.exchange_buffers() + (persistent ? states.gradients : 0.0) +
                      o.cuda_context + o.workspaces + o.nccl;

  std::map<std::string, int> layer_of;
  for (std::size_t i = 0; i < built.layers.size(); ++i)
    layer_of.emplace(built.layers[i].name, static_cast<int>(i));
  const engine::Schedule& s = built.schedule;
  struct Change {
    engine::Time at;
    double delta;
  };
  std::vector<Change> changes;
  // Per (layer, micro-batch): 1 after its forward, 3 once its recompute started, 2 after its
  // backward. A layer's pass may be several compute ops (an MoE block's router, experts and
  // shared experts; a zero-bubble W): the first of each pass changes the memory, once.
  std::map<std::pair<int, std::uint32_t>, int> state;
  std::set<int> has_gradient;
  std::map<std::pair<int, std::uint32_t>, bool> offloaded;  // activations in host memory
  double grads_live = 0;
  std::vector<engine::OpId> ops;
  // Activation offload's copies (docs/offload.md): a layer's kept activations leave the GPU when
  // its "act d2h" ends and are back when its "act h2d" starts.
  auto offload_copy = [&](const engine::Op& op) {
    if (!engine::is_host_copy(op)) return 0;
    const std::string& name = s.name_of(op);
    return name.ends_with(kActivationToHost) ? -1 : name.ends_with(kActivationFromHost) ? 1 : 0;
  };
  const engine::OpStore::Reader rank_op = s.ops.reader();
  for (const engine::OpId id : rank_ops)
    if (const engine::Op op = rank_op[id];
        op.kind == engine::OpKind::compute || offload_copy(op) != 0)
      ops.push_back(id);
  std::stable_sort(ops.begin(), ops.end(), [&](engine::OpId a, engine::OpId b) {
    return timeline.launch[a] < timeline.launch[b];
  });
  const double temporaries = parts.optimizer_temporaries(states);
  const double set_aside_for_step = (parts.full_shard() ? states.buffers : 0.0) +
                                    parts.data_parallel->backward_gradient_buffers(stage, -1);
  // The gradients the step sees are the strategy's (sharded under FSDP, even after no_sync);
  // those not in a persistent buffer go with zero_grad after it.
  const double step_gradients = persistent ? 0.0 : states.gradients;
  for (engine::OpId id : ops) {
    const engine::Op& op = s.ops[id];
    if (op.category == engine::Category::optimizer) {
      // The step holds no gathered FSDP unit (resharded) and no gradient waiting for its
      // reduction, both constant in `base` otherwise (as the estimate's optimizer step).
      changes.push_back(
          {timeline.launch[id], temporaries + step_gradients - grads_live - set_aside_for_step});
      changes.push_back({timeline.end[id], -temporaries - step_gradients + set_aside_for_step});
      grads_live = 0;
      has_gradient.clear();
      continue;
    }
    const std::string& name = s.name_of(op);
    const auto it = layer_of.find(name.substr(0, name.find(' ')));
    if (it == layer_of.end()) continue;
    const int li = it->second;
    const LayerActivation& a = parts.activations.at(li);
    int& st = state[std::pair{li, op.microbatch()}];
    if (const int copy = offload_copy(op); copy != 0) {
      // Only what the forward left on the GPU goes down, and only that comes back.
      bool& away = offloaded[std::pair{li, op.microbatch()}];
      if (copy < 0 && st == 1 && !away) {
        changes.push_back({timeline.end[id], -a.kept});
        away = true;
      } else if (copy > 0 && away) {
        changes.push_back({timeline.launch[id], a.kept});
        away = false;
      }
      continue;
    }
    switch (op.category) {
      case engine::Category::forward:
        if (st != 1) changes.push_back({timeline.end[id], a.kept + parts.weight_copy(li)});
        st = 1;
        break;
      case engine::Category::recompute:
        if (st == 1) changes.push_back({timeline.launch[id], a.full - a.kept});
        st = 3;
        break;
      case engine::Category::backward:
        if (st == 1 || st == 3) {
          double delta = -a.full - parts.weight_copy(li);
          if (has_gradient.insert(li).second) {
            delta += grads.at(li);
            grads_live += grads.at(li);
          }
          changes.push_back({timeline.end[id], delta});
        }
        st = 2;
        break;
      default:
        break;
    }
  }
  std::stable_sort(changes.begin(), changes.end(),
                   [](const Change& a, const Change& b) { return a.at < b.at; });
  std::vector<MemoryPoint> points;
  points.push_back({0.0, base});
  double now = base;
  for (const Change& c : changes) {
    now += c.delta;
    const double t = c.at.seconds();
    if (!points.empty() && points.back().time_s == t)
      points.back().bytes = now;
    else
      points.push_back({t, now});
  }
  return points;
}

}  // namespace clustersim::models
