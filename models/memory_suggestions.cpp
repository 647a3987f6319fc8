#include "models/memory_suggestions.hpp"

#include <algorithm>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <variant>

#include "models/plan_estimate.hpp"

namespace clustersim::models {

namespace {

struct Step {
  std::string change;  // as a --set flag: "training.recompute=full"
  std::function<void(Scenario&)> apply;
};
// The steps along one axis, cheapest first; each sets the axis to an absolute value, so steps of
// different axes compose and a later step of an axis replaces its earlier one.
using Axis = std::vector<Step>;

std::vector<Axis> axes_of(const Scenario& sc) {
  std::vector<Axis> axes;
  const auto& t = sc.training;
  const auto& p = sc.parallel;
  // Building the model sharded (meta device) costs nothing at run time: first.
  if (p.fsdp.init == FsdpInit::device)
    axes.push_back({{"parallel.fsdp.init=sharded",
                     [](Scenario& s) { s.parallel.fsdp.init = FsdpInit::sharded; }}});
  const bool transformer = std::holds_alternative<TransformerSpec>(sc.model.body);
  // Recompute costs a share of the forward again: selective little, full about a third.
  Axis recompute;
  if (transformer && t.recompute == Recompute::none)
    recompute.push_back({"training.recompute=selective",
                         [](Scenario& s) { s.training.recompute = Recompute::selective; }});
  if (t.recompute != Recompute::full)
    recompute.push_back(
        {"training.recompute=full", [](Scenario& s) { s.training.recompute = Recompute::full; }});
  // Full recompute of some blocks of each chunk (recompute_method: block): more of them, doubling,
  // up to all of the chunk's (what `full` alone does).
  if (const auto* tf = std::get_if<TransformerSpec>(&sc.model.body);
      tf && t.recompute == Recompute::full && t.recompute_method == RecomputeMethod::block) {
    int most = 0;
    for (const int n : p.stage_layers)
      most = std::max(most, n);
    if (p.stage_layers.empty()) most = tf->num_layers / (p.pp * p.virtual_stages);
    for (int n = t.recompute_num_layers * 2;; n *= 2) {
      const int layers = std::min(n, most);
      if (layers <= t.recompute_num_layers) break;
      recompute.push_back({"training.recompute_num_layers=" + std::to_string(layers),
                           [layers](Scenario& s) { s.training.recompute_num_layers = layers; }});
      if (layers == most) break;
    }
  }
  axes.push_back(std::move(recompute));
  // Smaller micro-batches at the same global batch: more, shorter steps.
  Axis micro;
  for (int mb = t.micro_batch / 2; mb >= 1; mb /= 2)
    micro.push_back({"training.micro_batch=" + std::to_string(mb),
                     [mb](Scenario& s) { s.training.micro_batch = mb; }});
  axes.push_back(std::move(micro));
  // Shard more of the model states over the data-parallel group.
  Axis zero;
  if (p.replicas() > 1) {
    const std::pair<DataParallel, const char*> stages[] = {{DataParallel::zero1, "zero1"},
                                                           {DataParallel::zero2, "zero2"},
                                                           {DataParallel::zero3, "zero3"}};
    const int current = p.data_parallel == DataParallel::ddp     ? 0
                        : p.data_parallel == DataParallel::zero1 ? 1
                        : p.data_parallel == DataParallel::zero2 ? 2
                                                                 : 3;
    for (int i = current; i < 3; ++i) {
      const DataParallel kind = stages[i].first;
      zero.push_back({std::string("parallel.data_parallel=") + stages[i].second,
                      [kind](Scenario& s) { s.parallel.data_parallel = kind; }});
    }
  }
  axes.push_back(std::move(zero));
  // Move the optimizer states to host memory (ZeRO-Offload), where the node's memory is known.
  // With DDP the step is refused by validation unless a ZeRO step of another axis came first.
  Axis offload;
  if (!p.offload.optimizer && sc.cluster.host.memory_bytes > 0 &&
      sc.cluster.host.memory_bandwidth > 0)
    offload.push_back({"parallel.offload.optimizer=true",
                       [](Scenario& s) { s.parallel.offload.optimizer = true; }});
  axes.push_back(std::move(offload));
  // More model parallelism at the same world size (dp shrinks).
  Axis more_tp, more_pp;
  if (transformer)
    for (int tp = p.tp * 2; tp <= sc.cluster.topology.node.gpus; tp *= 2)
      more_tp.push_back(
          {"parallel.tp=" + std::to_string(tp), [tp](Scenario& s) { s.parallel.tp = tp; }});
  axes.push_back(std::move(more_tp));
  for (int pp = p.pp * 2; pp <= sc.world_size() / p.tp && pp <= 256; pp *= 2)
    more_pp.push_back({"parallel.pp=" + std::to_string(pp), [pp](Scenario& s) {
                         s.parallel.pp = pp;
                         s.parallel.stage_layers.clear();
                       }});
  axes.push_back(std::move(more_pp));
  return axes;
}

// A changed copy of the scenario, validated as loading does, and its memory.
struct Changed {
  Scenario scenario;
  MemoryEstimate memory;
};

std::optional<Changed> apply_steps(const Scenario& sc, const std::vector<Axis>& axes,
                                   const std::vector<int>& chosen) {
  Scenario s = sc;
  for (std::size_t a = 0; a < axes.size(); ++a)
    if (chosen[a] >= 0) axes[a][static_cast<std::size_t>(chosen[a])].apply(s);
  s.parallel.dp = 0;
  try {
    validate_scenario(s);
    auto memory = estimate_memory_only(s);
    return Changed{std::move(s), std::move(memory)};
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// Along one axis alone, the first step that fits (or, when none does, the one that comes closest).
std::optional<MemorySuggestion> suggest_along(const Scenario& sc, const std::vector<Axis>& axes,
                                              std::size_t axis) {
  std::optional<MemorySuggestion> closest;
  std::vector<int> chosen(axes.size(), -1);
  for (std::size_t k = 0; k < axes[axis].size(); ++k) {
    chosen[axis] = static_cast<int>(k);
    const auto c = apply_steps(sc, axes, chosen);
    if (!c) continue;
    MemorySuggestion s{axes[axis][k].change, c->memory.needed(), c->memory.fits(),
                       std::string(to_string(c->memory.verdict()))};
    if (s.fits) return s;
    if (!closest || s.peak_bytes < closest->peak_bytes) closest = s;
  }
  return closest;
}

// Depth-first over the axes: each left as it is or moved to one of its steps, at most
// kMaxChanges of them. Along an axis the steps go cheapest first and stop at the first that
// fits (a later one would cost more for nothing); a combination that fits is not extended. So
// every candidate is minimal along each axis, and the plan search's estimate ranks them.
class CombinationSearch {
 public:
  static constexpr int kMaxChanges = 4;
  static constexpr std::size_t kMaxEstimates = 4000;  // bounds the time on odd plans

  CombinationSearch(const Scenario& sc, const std::vector<Axis>& axes)
      : sc_(sc), axes_(axes), figures_(plan_model_figures(sc)), chosen_(axes.size(), -1) {
    base_time_ = estimate_plan(sc, figures_).iteration_s;
  }

  std::optional<MemoryCombination> run() {
    visit(0, 0);
    return best_;
  }

 private:
  void visit(std::size_t axis, int changed) {
    if (axis == axes_.size()) return;
    visit(axis + 1, changed);  // this axis as it is
    if (changed == kMaxChanges) return;
    for (std::size_t k = 0; k < axes_[axis].size() && estimates_ < kMaxEstimates; ++k) {
      chosen_[axis] = static_cast<int>(k);
      ++estimates_;
      const auto c = apply_steps(sc_, axes_, chosen_);
      if (!c) continue;  // not a valid plan: the axis's next step may be
      if (c->memory.fits()) consider(*c, changed + 1);
      // Tight (it fits only without the fragmentation allowance): more may make it fit outright.
      if (c->memory.verdict() == MemoryVerdict::fits) break;
      visit(axis + 1, changed + 1);
    }
    chosen_[axis] = -1;
  }

  void consider(const Changed& c, int changes) {
    const double time = estimate_plan(c.scenario, figures_).iteration_s;
    const bool clear = c.memory.verdict() == MemoryVerdict::fits;  // not merely tight
    if (best_ &&
        std::tuple(!clear, time, changes) >= std::tuple(!best_clear_, best_time_, best_changes_))
      return;
    MemoryCombination m;
    for (std::size_t a = 0; a < axes_.size(); ++a)
      if (chosen_[a] >= 0)
        m.changes.push_back(axes_[a][static_cast<std::size_t>(chosen_[a])].change);
    m.peak_bytes = c.memory.needed();
    m.fits = c.memory.fits();
    m.verdict = std::string(to_string(c.memory.verdict()));
    m.estimated_time_ratio = base_time_ > 0 ? time / base_time_ : 0;
    best_ = std::move(m);
    best_clear_ = clear;
    best_time_ = time;
    best_changes_ = changes;
  }

  const Scenario& sc_;
  const std::vector<Axis>& axes_;
  PlanModelFigures figures_;
  std::vector<int> chosen_;
  std::size_t estimates_ = 0;
  double base_time_ = 0;
  std::optional<MemoryCombination> best_;
  bool best_clear_ = false;
  double best_time_ = 0;
  int best_changes_ = 0;
};

}  // namespace

std::vector<MemorySuggestion> memory_suggestions(const Scenario& sc) {
  std::vector<MemorySuggestion> out;
  const auto axes = axes_of(sc);
  for (std::size_t a = 0; a < axes.size(); ++a)
    if (auto s = suggest_along(sc, axes, a)) out.push_back(std::move(*s));
  return out;
}

std::optional<MemoryCombination> memory_combination(const Scenario& sc) {
  const auto axes = axes_of(sc);
  try {
    return CombinationSearch(sc, axes).run();
  } catch (const std::exception&) {
    // A plan the closed-form estimate cannot rank (a workload it does not model) gets no
    // combined suggestion; the per-axis ones above still stand, and the run is not failed for it.
    return std::nullopt;
  }
}

}  // namespace clustersim::models
