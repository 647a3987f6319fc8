#include "models/metrics.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <numeric>
#include <span>

#include "models/plans/expert_parallelism.hpp"
#include "models/rank_runs.hpp"

namespace clustersim::models {

namespace {

// Progress through compute_metrics: each step's share of its time on the GPT-3 175B scenario
// (0.055 s in all, 4 Dec 2026: the FLOP sum and each rank's last end 82 %, the critical rank's
// ops under 1 %, its sweep 5 %, the memory estimate 9 %, the memory timeline 3 %, the busiest
// links ≈ 0).
constexpr double kMetricsAfterFlops = 0.82, kMetricsAfterCriticalRank = 0.82,
                 kMetricsAfterSweep = 0.87, kMetricsAfterMemoryEstimate = 0.96;

using engine::Category;
using engine::Time;

// Classes an instant of the critical rank can be attributed to.
enum Class { kCompute, kRecompute, kDp, kTp, kPp, kEp, kCp, kClasses };

int class_of(Category c) {
  switch (c) {
    case Category::forward:
    case Category::backward:
    case Category::optimizer:
      return kCompute;
    case Category::recompute:
      return kRecompute;
    case Category::dp_comm:
      return kDp;
    case Category::tp_comm:
      return kTp;
    case Category::pp_comm:
      return kPp;
    case Category::ep_comm:
      return kEp;
    case Category::cp_comm:
      return kCp;
  }
  return kCompute;
}

// What every op contributes, in one pass over the ops (40 bytes each, 0.6 GB on GPT-3 175B,
// which four passes read before): the FLOPs, each rank's last end (the critical rank is the
// first of the latest), and where each rank's ops lie.
struct OpScan {
  double model_flops = 0, executed_flops = 0;
  engine::Rank critical_rank = 0;
  RankRuns runs;
};

// What one FLOP of an op counts in the model and the executed FLOPs, by the op's name. A
// routed-experts op carries the pace-setting rank's load g = min(f, cf) × the mean T·top_k (every
// rank is simulated at that pace, expert_parallelism.hpp), but the cluster routes T·top_k copies
// a rank: the model FLOPs count the balanced load (1/g), the executed ones what the experts
// accept of it, min(1, cf)/g (a capacity below the mean drops tokens). Other ops: 1.
struct FlopScales {
  std::vector<double> model, executed;  // index: interned name; empty: all 1
};

FlopScales flop_scales(const Scenario& sc, const engine::Schedule& s) {
  const auto* t = std::get_if<TransformerSpec>(&sc.model.body);
  if (t == nullptr || !t->moe || sc.workload.from_chakra()) return {};
  const double g = routed_load_factor(*t->moe, sc.parallel.ep);
  if (!(g > 0.0) || g == 1.0) return {};
  FlopScales out{std::vector<double>(s.names.size(), 1.0),
                 std::vector<double>(s.names.size(), 1.0)};
  for (std::size_t i = 0; i < s.names.size(); ++i)
    if (is_routed_experts_op(s.names[i])) {
      out.model[i] = 1.0 / g;
      out.executed[i] = std::min(1.0, t->moe->capacity_factor) / g;
    }
  return out;
}

// The FLOPs of some ops, summed in id order.
struct FlopSums {
  double model = 0, executed = 0;
};

OpScan scan_ops(const Scenario& sc, const engine::Schedule& s, const engine::Timeline& tl) {
  OpScan out{0, 0, 0, RankRuns(s.ops.size())};
  std::vector<Time> last(s.num_ranks, Time::zero());
  const FlopScales scales = flop_scales(sc, s);
  const engine::OpStore::Reader ops = s.ops.reader_without_peers();  // no group or peer read
  const auto add_flops = [&](const engine::Op& op, FlopSums& sums) {
    const bool scaled = !scales.model.empty() && op.kind == engine::OpKind::compute;
    if (op.category == Category::forward || op.category == Category::backward)
      sums.model += s.flops(op) * (scaled ? scales.model[op.name] : 1.0);
    if (op.category == Category::forward || op.category == Category::backward ||
        op.category == Category::recompute)
      sums.executed += s.flops(op) * (scaled ? scales.executed[op.name] : 1.0);
  };
  // A stamped run's ops are its records' with another rank (engine/op_store.hpp): their FLOPs
  // are summed once per distinct range of records, so a data-parallel replica's copies cost
  // only the pass over their ends (GPT-3 175B: 1 op in 8 read instead of all 15 M).
  std::map<std::pair<std::uint32_t, engine::OpId>, FlopSums> stamped_sums;
  s.ops.for_each_run([&](const engine::OpStore::RunView& run) {
    FlopSums sums;
    if (run.stamped) {
      const auto [it, fresh] = stamped_sums.try_emplace({run.first_record, run.end - run.begin});
      if (fresh)
        for (engine::OpId id = run.begin; id < run.end; ++id)
          add_flops(ops[id], it->second);
      sums = it->second;
      Time latest = last[run.rank];
      for (engine::OpId id = run.begin; id < run.end; ++id)
        latest = std::max(latest, tl.end[id]);
      last[run.rank] = latest;
      out.runs.add(run.begin, run.end, run.rank);
    } else {
      for (engine::OpId id = run.begin; id < run.end; ++id) {
        const engine::Op op = ops[id];
        add_flops(op, sums);
        last[op.rank] = std::max(last[op.rank], tl.end[id]);
        out.runs.add(id, op.rank);
      }
    }
    out.model_flops += sums.model;
    out.executed_flops += sums.executed;
  });
  out.critical_rank =
      static_cast<engine::Rank>(std::max_element(last.begin(), last.end()) - last.begin());
  return out;
}

struct Sweep {
  TimeBreakdown breakdown;
  double comm_in_flight = 0;  // time any communication was in flight
};

// Attributes every instant of [0, makespan] on one rank, whose ops are `rank_ops`, to one class
// (see TimeBreakdown).
Sweep sweep_rank(const engine::Schedule& s, const engine::Timeline& tl,
                 std::span<const engine::OpId> rank_ops) {
  struct Edge {
    Time t;
    int cls;
    int delta;
  };
  std::vector<Edge> edges;
  const engine::OpStore::Reader ops = s.ops.reader_without_peers();  // categories only
  for (const engine::OpId id : rank_ops) {
    const engine::Op op = ops[id];
    if (tl.end[id] <= tl.launch[id]) continue;
    const int cls = class_of(op.category);
    edges.push_back({tl.launch[id], cls, +1});
    edges.push_back({tl.end[id], cls, -1});
  }
  std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) {
    return a.t != b.t ? a.t < b.t : a.delta < b.delta;
  });
  std::array<int, kClasses> active{};
  std::array<double, kClasses> seconds{};
  Sweep out;
  Time at = Time::zero();
  double idle = 0;
  auto account = [&](Time until) {
    const double dt = (until - at).seconds();
    if (dt <= 0) return;
    const int comm = active[kDp] + active[kTp] + active[kPp] + active[kEp] + active[kCp];
    if (comm > 0) out.comm_in_flight += dt;
    if (active[kCompute] > 0) {
      seconds[kCompute] += dt;
    } else if (active[kRecompute] > 0) {
      seconds[kRecompute] += dt;
    } else if (comm > 0) {
      int kinds = 0;
      for (int c = kDp; c <= kCp; ++c)
        kinds += active[c] > 0;
      for (int c = kDp; c <= kCp; ++c)
        if (active[c] > 0) seconds[c] += dt / kinds;
    } else {
      idle += dt;
    }
  };
  for (const Edge& e : edges) {
    account(e.t);
    at = e.t;
    active[e.cls] += e.delta;
  }
  account(tl.makespan);
  out.breakdown = {seconds[kCompute], seconds[kRecompute], seconds[kDp], seconds[kTp],
                   seconds[kPp],      seconds[kEp],        seconds[kCp], idle};
  return out;
}

TimeBreakdown per_iteration(TimeBreakdown b, double iterations) {
  for (double* v : {&b.compute, &b.recompute, &b.dp_comm, &b.tp_comm, &b.pp_comm, &b.ep_comm,
                    &b.cp_comm, &b.idle})
    *v /= iterations;
  return b;
}

std::vector<std::pair<engine::LinkId, double>> busiest_links(const engine::Timeline& tl,
                                                             const engine::Topology& topo,
                                                             std::size_t max_links) {
  std::vector<std::pair<engine::LinkId, double>> used;
  const double span = tl.makespan.seconds();
  for (engine::LinkId l = 0; l < tl.link_bytes.size(); ++l) {
    if (tl.link_bytes[l] <= 0 || span <= 0) continue;
    used.emplace_back(l, tl.link_bytes[l] / (topo.link(l).bandwidth.bytes_per_second() * span));
  }
  std::stable_sort(used.begin(), used.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  if (used.size() > max_links) used.resize(max_links);
  return used;
}

}  // namespace

Result compute_metrics(const Scenario& sc, const BuiltSchedule& built, const engine::Timeline& tl,
                       const engine::Topology& topo, std::size_t max_links,
                       const std::function<void(double)>& progress) {
  auto done = [&progress](double fraction) {
    if (progress) progress(fraction);
  };
  done(0.0);
  const auto& s = built.schedule;
  const double iterations = sc.simulation.iterations;
  Result r;
  r.scenario = sc.name;
  r.world_size = static_cast<int>(sc.world_size());
  r.iteration_time_s = tl.makespan.seconds() / iterations;
  r.events = tl.events;
  r.from_traces = sc.workload.from_chakra();
  const double t = r.iteration_time_s;
  if (t > 0 && !r.from_traces) {
    r.samples_per_s = static_cast<double>(sc.training.global_batch) / t;
    r.tokens_per_s = r.samples_per_s * std::max(1, sc.training.seq_len);
  }

  const OpScan scan = scan_ops(sc, s, tl);
  const double model_flops = scan.model_flops, executed_flops = scan.executed_flops;
  // The FLOPs of the simulated ranks, over their GPU-seconds: a folded run's mirrored ranks do
  // the same work.
  const double per_gpu_second = iterations * s.simulated_ranks() * t;
  if (per_gpu_second > 0) {
    r.tflops_per_gpu = executed_flops / per_gpu_second / 1e12;
    const double peak = sc.cluster.gpu.peak_flops[static_cast<std::size_t>(sc.training.precision)];
    if (!r.from_traces) r.mfu = model_flops / per_gpu_second / peak;
  }

  done(kMetricsAfterFlops);
  r.critical_rank = scan.critical_rank;
  const std::vector<engine::OpId> critical_ops = scan.runs.ops_of(s, r.critical_rank);
  r.offload = offload_activity(s, tl, critical_ops);
  done(kMetricsAfterCriticalRank);
  const Sweep sweep = sweep_rank(s, tl, critical_ops);
  done(kMetricsAfterSweep);
  const TimeBreakdown b = per_iteration(sweep.breakdown, iterations);
  r.breakdown_s = b;
  r.exposed_comm_s = {b.dp_comm, b.tp_comm,
                      b.pp_comm, b.ep_comm,
                      b.cp_comm, b.dp_comm + b.tp_comm + b.pp_comm + b.ep_comm + b.cp_comm};
  const double in_flight = sweep.comm_in_flight / iterations;
  // Exposed communication is part of what was in flight, so the share is in [0, 1]; the two sums
  // add the same intervals in different orders and can differ by an ulp (−7e-16 seen).
  r.comm_overlap_fraction =
      in_flight > 0 ? std::clamp(1.0 - r.exposed_comm_s.total / in_flight, 0.0, 1.0) : 0.0;
  r.bubble_fraction = t > 0 ? b.idle / t : 0.0;

  if (!r.from_traces) {
    r.memory = estimate_memory(sc, built, measured_offload_windows(sc, built, tl));
    done(kMetricsAfterMemoryEstimate);
    const bool same_rank = r.memory.peak_rank == r.critical_rank;
    const std::vector<engine::OpId> peak_ops =
        same_rank ? std::vector<engine::OpId>{} : scan.runs.ops_of(s, r.memory.peak_rank);
    r.memory.timeline =
        memory_timeline(sc, built, tl, r.memory.peak_rank, same_rank ? critical_ops : peak_ops);
  }

  // A folded run carries only replica 0's traffic (and the whole of each data-parallel
  // collective): no link's load is the real one, so none is reported (run_scenario's note). One
  // checked by the network carried every replica's and reports them.
  if (built.folded_replicas > 1 && !built.replicas_checked) max_links = 0;
  for (const auto& [id, util] : busiest_links(tl, topo, max_links)) {
    const auto& link = topo.link(id);
    r.links.push_back({link.name, std::string(to_string(link.kind)), tl.link_bytes[id] / iterations,
                       link.bandwidth.bytes_per_second(), util});
    r.busiest_link_ids.push_back(id);
  }
  done(1.0);
  return r;
}

std::vector<TimeBreakdown> breakdown_per_rank(const Scenario& sc, const engine::Schedule& s,
                                              const engine::Timeline& tl) {
  // Ops grouped by rank in one pass (a counting sort), so every rank costs its own ops only.
  std::vector<std::uint32_t> first(s.num_ranks + 1, 0);
  for (const auto& op : s.ops)
    ++first[op.rank + 1];
  for (std::size_t r = 0; r < s.num_ranks; ++r)
    first[r + 1] += first[r];
  std::vector<engine::OpId> by_rank(s.ops.size());
  std::vector<std::uint32_t> next(first.begin(), first.end() - 1);
  for (engine::OpId id = 0; id < s.ops.size(); ++id)
    by_rank[next[s.ops[id].rank]++] = id;

  std::vector<TimeBreakdown> out(s.num_ranks);
  for (engine::Rank r = 0; r < s.num_ranks; ++r) {
    if (!s.simulated(r)) continue;
    const std::span<const engine::OpId> ops(by_rank.data() + first[r], first[r + 1] - first[r]);
    out[r] = per_iteration(sweep_rank(s, tl, ops).breakdown, sc.simulation.iterations);
  }
  // A folded rank's time is its mirror's.
  for (engine::Rank r = 0; r < s.num_ranks; ++r)
    if (!s.simulated(r)) out[r] = out[s.mirror[r]];
  return out;
}

}  // namespace clustersim::models
