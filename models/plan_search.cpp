#include "models/plan_search.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "models/memory_model.hpp"
#include "models/parallel_tasks.hpp"

namespace clustersim::models {

namespace {

std::vector<int> divisors(int n, int at_most) {
  std::vector<int> d;
  for (int i = 1; i <= std::min(n, at_most); ++i)
    if (n % i == 0) d.push_back(i);
  return d;
}

// Micro-batches up to 16 sequences for transformers (thousands of tokens already fill the GEMMs);
// layer lists (CNNs) take a sample per row and want hundreds.
const std::vector<int> kMicroBatches = {1, 2, 4, 8, 16};
const std::vector<int> kListMicroBatches = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512};
const std::vector<int> kVirtualStages = {2, 4};
const std::vector<double> kBucketsMiB = {25, 100};

// Every plan for `world` GPUs the rules could accept, in a fixed order (the tie-break).
std::vector<Scenario> enumerate_plans(const Scenario& base, int world) {
  const int gpn = base.cluster.topology.node.gpus;
  const auto* transformer = std::get_if<TransformerSpec>(&base.model.body);
  const PlanModelFigures shape = plan_model_figures(base);
  const int experts = transformer && transformer->moe ? transformer->moe->num_experts : 1;
  std::vector<Scenario> plans;
  Scenario s = base;
  s.cluster.nodes = world / gpn;
  s.cluster.topology.nodes = s.cluster.nodes;
  s.parallel.stage_layers.clear();
  s.parallel.cp = 1;
  for (int tp : transformer ? divisors(gpn, gpn) : std::vector<int>{1})
    for (int pp : divisors(shape.blocks, world / tp)) {
      if (world % (tp * pp) != 0) continue;
      const int dp = world / (tp * pp);
      for (int ep : divisors(experts, dp)) {
        if (dp % ep != 0) continue;
        std::vector<DataParallel> strategies{DataParallel::ddp};
        if (dp > 1)
          strategies.insert(strategies.end(),
                            {DataParallel::zero1, DataParallel::zero2, DataParallel::fsdp});
        if (static_cast<long>(tp) * ep * dp > gpn && dp > 1)
          strategies.push_back(DataParallel::hsdp);
        for (DataParallel strategy : strategies)
          for (int mb : transformer ? kMicroBatches : kListMicroBatches) {
            if (base.training.global_batch % (static_cast<long>(mb) * dp) != 0) continue;
            const long micro_batches = base.training.global_batch / (static_cast<long>(mb) * dp);
            std::vector<std::pair<PipelineSchedule, int>> schedules{
                {PipelineSchedule::one_f_one_b, 1}};
            if (pp > 1) {
              schedules.emplace_back(PipelineSchedule::gpipe, 1);
              for (int v : kVirtualStages)
                if (shape.blocks % (pp * v) == 0 && micro_batches % pp == 0)
                  schedules.emplace_back(PipelineSchedule::interleaved, v);
              // Zero bubble with every data-parallel strategy (docs/parallelism.md).
              for (const auto zb : {PipelineSchedule::zb_h1, PipelineSchedule::zb_h2})
                schedules.emplace_back(zb, 1);
            }
            for (const auto& [schedule, v] : schedules)
              for (bool sp : tp > 1 ? std::vector<bool>{false, true} : std::vector<bool>{false})
                for (Recompute rc :
                     transformer ? std::vector<Recompute>{Recompute::none, Recompute::selective,
                                                          Recompute::full}
                                 : std::vector<Recompute>{Recompute::none, Recompute::full})
                  for (double bucket :
                       strategy == DataParallel::fsdp || strategy == DataParallel::hsdp
                           ? std::vector<double>{kBucketsMiB.front()}
                           : kBucketsMiB) {
                    ParallelConfig& p = s.parallel;
                    p.tp = tp;
                    p.pp = pp;
                    p.dp = dp;
                    p.ep = ep;
                    p.data_parallel = strategy;
                    // Building the model whole on the GPU is PyTorch FSDP's start-up; the
                    // other strategies' plans start as they train.
                    if (strategy != DataParallel::fsdp && strategy != DataParallel::hsdp)
                      p.fsdp.init = FsdpInit::sharded;
                    p.schedule = schedule;
                    p.virtual_stages = v;
                    p.sequence_parallel = sp;
                    p.bucket_bytes = bucket * 1024 * 1024;
                    s.training.micro_batch = mb;
                    s.training.recompute = rc;
                    // The search's full recompute is every block's (Megatron's uniform, 1);
                    // where the base file gives recompute_method / recompute_num_layers, a full
                    // plan states that value (plan_overrides) and the others drop them.
                    const bool given =
                        rc == Recompute::full && (base.training.recompute_method_given ||
                                                  base.training.recompute_num_layers_given);
                    s.training.recompute_method = RecomputeMethod::uniform;
                    s.training.recompute_num_layers = 1;
                    s.training.recompute_method_given = given;
                    s.training.recompute_num_layers_given = given;
                    plans.push_back(s);
                  }
          }
      }
    }
  return plans;
}

double objective_score(PlanObjective objective, const Scenario& s, double iteration_s) {
  switch (objective) {
    case PlanObjective::time:
      return iteration_s;
    case PlanObjective::tokens_per_s:
      return iteration_s;  // the batch is fixed: the same order
    case PlanObjective::cost: {
      const double tokens =
          static_cast<double>(s.training.global_batch) * std::max(1, s.training.seq_len);
      return static_cast<double>(s.world_size()) * iteration_s / tokens;
    }
  }
  return iteration_s;
}

std::string percent(double fraction) {
  std::ostringstream os;
  os.precision(2);
  os << std::fixed << 100 * fraction;
  std::string text = os.str();
  while (text.back() == '0')
    text.pop_back();
  if (text.back() == '.') text.pop_back();
  return text + " %";
}

// A simulated result's critical-rank breakdown in the estimate's terms (idle time as bubble).
PlanEstimate simulated_terms(const Result& r) {
  PlanEstimate e;
  e.compute_s = r.breakdown_s.compute;
  e.recompute_s = r.breakdown_s.recompute;
  e.tp_s = r.breakdown_s.tp_comm;
  e.pp_s = r.breakdown_s.pp_comm;
  e.ep_s = r.breakdown_s.ep_comm;
  e.dp_s = r.breakdown_s.dp_comm;
  e.bubble_s = r.breakdown_s.idle;
  e.iteration_s = r.iteration_time_s;
  e.bubble_fraction = r.bubble_fraction;
  e.mfu = r.mfu;
  return e;
}

// Why `a` beats `b` in one line: the term where `b` loses most.
std::string reason(const PlanCandidate& a, const PlanCandidate& b) {
  const bool simulated = a.simulated && b.simulated;
  const PlanEstimate x = simulated ? simulated_terms(*a.simulated) : a.estimate;
  const PlanEstimate y = simulated ? simulated_terms(*b.simulated) : b.estimate;
  const ParallelConfig& pa = a.scenario.parallel;
  const ParallelConfig& pb = b.scenario.parallel;
  const int gpn = a.scenario.cluster.topology.node.gpus;
  const std::vector<std::pair<double, std::string>> terms = {
      {y.tp_s - x.tp_s, pa.tp <= gpn && pb.tp > pa.tp
                            ? "less TP traffic (tp " + std::to_string(pa.tp) + " vs " +
                                  std::to_string(pb.tp) + "), TP stays inside NVLink"
                            : "less TP traffic"},
      {y.bubble_s - x.bubble_s, "bubble " + percent(x.bubble_fraction) + " with " +
                                    std::to_string(a.scenario.num_microbatches()) +
                                    " micro-batches (vs " + percent(y.bubble_fraction) + ")"},
      {y.dp_s - x.dp_s, "data-parallel communication hidden behind backward (" +
                            std::string(kDataParallelNames.name(pa.data_parallel)) + ")"},
      {y.recompute_s - x.recompute_s,
       "less recompute (" + std::string(kRecomputeNames.name(a.scenario.training.recompute)) +
           " vs " + std::string(kRecomputeNames.name(b.scenario.training.recompute)) + ")"},
      {y.compute_s - x.compute_s, "GEMMs closer to peak (micro-batch " +
                                      std::to_string(a.scenario.training.micro_batch) + ", tp " +
                                      std::to_string(pa.tp) + ")"},
      {y.pp_s - x.pp_s, "less pipeline traffic"},
      {y.ep_s - x.ep_s, "cheaper all-to-all (ep " + std::to_string(pa.ep) + ")"},
      {y.optimizer_s - x.optimizer_s, "optimizer step sharded"},
  };
  const auto best = std::max_element(
      terms.begin(), terms.end(), [](const auto& l, const auto& r) { return l.first < r.first; });
  if (best->first > 1e-9 * x.iteration_s) return best->second;
  if (a.memory_bytes < b.memory_bytes) return "same time, less memory";
  return "same time; first in search order";
}

}  // namespace

std::optional<PlanObjective> parse_plan_objective(std::string_view name) {
  if (name == "time") return PlanObjective::time;
  if (name == "tokens_per_s") return PlanObjective::tokens_per_s;
  if (name == "cost") return PlanObjective::cost;
  return std::nullopt;
}

std::vector<std::string> plan_overrides(const Scenario& s) {
  const ParallelConfig& p = s.parallel;
  std::ostringstream bucket;
  bucket << p.bucket_bytes / (1024 * 1024);
  std::vector<std::string> out{
      "cluster.nodes=" + std::to_string(s.cluster.nodes),
      "parallel.tp=" + std::to_string(p.tp),
      "parallel.pp=" + std::to_string(p.pp),
      "parallel.dp=" + std::to_string(p.dp),
      "parallel.ep=" + std::to_string(p.ep),
      "parallel.data_parallel=" + std::string(kDataParallelNames.name(p.data_parallel)),
      "parallel.schedule=" + std::string(kPipelineScheduleNames.name(p.schedule)),
      "parallel.virtual_stages=" + std::to_string(p.virtual_stages),
      "parallel.sequence_parallel=" + std::string(p.sequence_parallel ? "true" : "false"),
      "parallel.bucket_mb=" + bucket.str(),
      "training.micro_batch=" + std::to_string(s.training.micro_batch),
      "training.recompute=" + std::string(kRecomputeNames.name(s.training.recompute))};
  if (s.training.recompute_method_given) {
    out.push_back("training.recompute_method=" +
                  std::string(kRecomputeMethodNames.name(s.training.recompute_method)));
    out.push_back("training.recompute_num_layers=" +
                  std::to_string(s.training.recompute_num_layers));
  }
  return out;
}

std::string describe_plan(const Scenario& s) {
  const ParallelConfig& p = s.parallel;
  std::string text = "tp " + std::to_string(p.tp) + " · pp " + std::to_string(p.pp);
  if (p.pp > 1) {
    text += " (" + std::string(kPipelineScheduleNames.name(p.schedule));
    if (p.virtual_stages > 1) text += " x" + std::to_string(p.virtual_stages);
    text += ")";
  }
  text += " · dp " + std::to_string(p.dp);
  if (p.ep > 1) text += " · ep " + std::to_string(p.ep);
  text += " · " + std::string(kDataParallelNames.name(p.data_parallel));
  if (p.data_parallel != DataParallel::fsdp && p.data_parallel != DataParallel::hsdp) {
    std::ostringstream bucket;
    bucket << p.bucket_bytes / (1024 * 1024);
    text += " " + bucket.str() + " MiB";
  }
  text += " · mb " + std::to_string(s.training.micro_batch);
  if (p.sequence_parallel) text += " · sp";
  if (s.training.recompute != Recompute::none)
    text += " · recompute " + std::string(kRecomputeNames.name(s.training.recompute));
  return text;
}

PlanSearchResult search_plans(const Scenario& base, const PlanSearchOptions& options) {
  if (base.workload.from_chakra())
    base.fail("workload.chakra",
              "a Chakra workload's plan is fixed in its traces; allowed: a scenario with a model "
              "(clustersim plan searches the plans of a model)");
  const int gpn = base.cluster.topology.node.gpus;
  const int gpus = options.gpus.value_or(static_cast<int>(base.world_size()));
  if (gpus < gpn || gpus % gpn != 0)
    throw ScenarioError("--gpus " + std::to_string(gpus) + ": not whole nodes of " +
                        std::to_string(gpn) + " GPUs; allowed: a multiple of " +
                        std::to_string(gpn));
  PlanSearchResult result;
  result.gpus = gpus;
  result.rule = rule_of_thumb(base, gpus);
  // Cost per token can favour fewer GPUs: search halvings of the world down to one node.
  std::vector<int> worlds{gpus};
  if (options.objective == PlanObjective::cost)
    for (int w = gpus / 2; w >= gpn && w % gpn == 0; w /= 2)
      worlds.push_back(w);

  const PlanModelFigures figures = plan_model_figures(base);
  std::vector<PlanCandidate> ranked;
  for (int world : worlds) {
    std::vector<Scenario> plans = enumerate_plans(base, world);
    result.enumerated += plans.size();
    for (std::size_t i = 0; i < plans.size(); ++i) {
      if (options.progress && i % 4096 == 0)
        options.progress("searching", static_cast<double>(i) / static_cast<double>(plans.size()));
      try {
        validate_scenario(plans[i]);
      } catch (const ScenarioError&) {
        ++result.invalid;
        continue;
      }
      PlanCandidate c;
      c.estimate = estimate_plan(plans[i], figures);
      c.score = objective_score(options.objective, plans[i], c.estimate.iteration_s);
      c.scenario = std::move(plans[i]);
      ranked.push_back(std::move(c));
    }
  }
  result.ranked = ranked.size();
  if (ranked.empty())
    throw ScenarioError("no valid plan for " + base.model.name + " on " + std::to_string(gpus) +
                        " GPUs with global_batch " + std::to_string(base.training.global_batch));
  // Best estimate first; stable, so the enumeration order breaks ties.
  std::stable_sort(
      ranked.begin(), ranked.end(),
      [](const PlanCandidate& a, const PlanCandidate& b) { return a.score < b.score; });
  // The memory model walks every micro-batch of a stage, the costly part: run it best-first and
  // stop at `top` plans that fit, which returns the same list as pruning everything first.
  for (PlanCandidate& c : ranked) {
    if (static_cast<int>(result.top.size()) >= options.top) break;
    const MemoryEstimate memory = estimate_memory_only(c.scenario);
    c.memory_bytes = memory.needed();
    c.capacity_bytes = memory.capacity;
    c.tight = memory.verdict() == MemoryVerdict::tight;
    if (!memory.fits()) {
      ++result.does_not_fit;
      continue;
    }
    result.top.push_back(std::move(c));
  }
  // The flow model for the best few, in parallel (each run is independent).
  const int wanted = options.resimulate >= 0 ? options.resimulate
                                             : (gpus <= kAutoResimulateGpus ? options.top : 0);
  const std::size_t resimulate =
      std::min<std::size_t>(result.top.size(), static_cast<std::size_t>(wanted));
  result.resimulated = resimulate;
  run_tasks_in_parallel(resimulate, options.jobs, [&result](std::size_t i) {
    RunOptions run;
    run.network = "flow";
    run.record_starts = false;  // no trace: `fold: auto` may fold with the network's check
    result.top[i].simulated = run_scenario(result.top[i].scenario, run).result;
  });
  // Where the flow model ran, its figures decide the order among those plans; the reasons then
  // compare its breakdowns.
  for (std::size_t i = 0; i < resimulate; ++i) {
    PlanCandidate& c = result.top[i];
    c.score = objective_score(options.objective, c.scenario, c.simulated->iteration_time_s);
  }
  std::stable_sort(
      result.top.begin(), result.top.begin() + static_cast<std::ptrdiff_t>(resimulate),
      [](const PlanCandidate& a, const PlanCandidate& b) { return a.score < b.score; });
  for (std::size_t i = 0; i + 1 < result.top.size(); ++i)
    result.top[i].reason = reason(result.top[i], result.top[i + 1]);
  if (!result.top.empty())
    result.top.back().reason = "last of the top " + std::to_string(result.top.size());
  return result;
}

}  // namespace clustersim::models
