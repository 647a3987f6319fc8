// The rule-of-thumb plan (docs/plan-search.md "Decision tree") and writing a plan as a scenario.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "engine/io/atomic_file.hpp"
#include "models/frontend.hpp"
#include "models/plan_search.hpp"

namespace clustersim::models {

namespace {

// Mixed-precision Adam: 2 (weights) + 2 (gradients) + 12 (fp32 master, m, v) bytes per parameter,
// the tutorials' figure; activations are left to the search.
constexpr double kBytesPerParam = 16;

std::string gib(double bytes) {
  std::ostringstream os;
  os.precision(3);
  os << bytes / (1024.0 * 1024 * 1024) << " GiB";
  return os.str();
}

// A layer (or the sharded model) does not fit: TP inside a node, then PP across nodes.
void tensor_then_pipeline(RuleOfThumb& rule, double states, double layer, double memory, int gpn,
                          int gpus, int blocks) {
  ParallelConfig& p = rule.parallel;
  p.tp = gpn;
  rule.steps.push_back("a layer's states (" + gib(layer) + ") or the shards are too large -> TP " +
                       std::to_string(gpn) + " inside a node");
  int pp = 1;
  while (states / (p.tp * pp) > memory / 2 && pp < blocks && gpus % (p.tp * pp * 2) == 0)
    pp *= 2;
  if (pp > 1) {
    p.pp = pp;
    rule.steps.push_back("too deep: " + gib(states / p.tp) + " per TP rank -> PP " +
                         std::to_string(pp) + " across nodes");
  }
}

}  // namespace

RuleOfThumb rule_of_thumb(const Scenario& base, int gpus) {
  RuleOfThumb rule;
  const PlanModelFigures f = plan_model_figures(base);
  const double params =
      f.blocks * (f.block_params) + f.moe_blocks * f.block_expert_params + f.edge_params;
  const double memory = base.cluster.gpu.memory_bytes;
  const int gpn = base.cluster.topology.node.gpus;
  const double states = params * kBytesPerParam;
  ParallelConfig& p = rule.parallel;
  p.dp = gpus;
  const double layer = (f.block_params + f.block_expert_params) * kBytesPerParam;
  if (states <= memory) {
    rule.steps.push_back("model states " + gib(states) + " fit on one GPU (" + gib(memory) +
                         ") -> DDP");
  } else if (states / gpus <= memory && layer <= memory / 2) {
    p.data_parallel = DataParallel::fsdp;
    rule.steps.push_back("model states " + gib(states) + " do not fit on one GPU, " +
                         gib(states / gpus) + " sharded over " + std::to_string(gpus) +
                         " do -> FSDP / ZeRO-3");
  } else {
    tensor_then_pipeline(rule, states, layer, memory, gpn, gpus, f.blocks);
  }
  p.dp = std::max(1, gpus / (p.tp * p.pp));
  if (f.moe_blocks > 0) {
    const auto& moe = std::get<TransformerSpec>(base.model.body).moe;
    int ep = 1;
    while (ep * 2 <= moe->num_experts && moe->num_experts % (ep * 2) == 0 && p.dp % (ep * 2) == 0)
      ep *= 2;
    p.ep = ep;
    rule.steps.push_back("MoE -> EP " + std::to_string(ep) +
                         " (experts across data-parallel ranks)");
  }
  return rule;
}

void write_plan_scenario(const Scenario& plan, const std::string& source, const std::string& path) {
  check_output_path(path, plan.inputs, "--out");
  YAML::Node root = YAML::LoadFile(source);
  root["name"] = plan.name + "-planned";
  root["cluster"]["nodes"] = plan.cluster.nodes;
  // Derived (dp) or tied to the old split (stage_layers): either could only disagree now.
  if (root["parallel"]) {
    root["parallel"].remove("dp");
    root["parallel"].remove("stage_layers");
  }
  // The source's partial recompute (recompute_method, recompute_num_layers) is not searched: a
  // full plan states uniform, 1 (plan_overrides), any other drops the keys.
  if (root["training"] && !plan.training.recompute_method_given) {
    root["training"].remove("recompute_method");
    root["training"].remove("recompute_num_layers");
  }
  for (const std::string& o : plan_overrides(plan)) {
    const std::size_t dot = o.find('.');
    const std::size_t eq = o.find('=');
    const std::string section = o.substr(0, dot);
    const std::string key = o.substr(dot + 1, eq - dot - 1);
    if (section == "cluster") continue;  // nodes, set above
    if (key == "dp") continue;
    root[section][key] = YAML::Load(o.substr(eq + 1));
  }
  engine::write_file_atomically(path, [&](std::ostream& os) {
    os << "# The best plan of `clustersim plan " << source << "` (docs/plan-search.md).\n"
       << YAML::Dump(root) << "\n";
  });
}

}  // namespace clustersim::models
