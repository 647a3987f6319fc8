#include "cli/plan_command.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/progress.hpp"
#include "models/frontend.hpp"
#include "models/plan_search.hpp"

namespace clustersim::cli {

namespace {

struct PlanArgs {
  std::string file;
  std::vector<std::string> overrides;
  int gpus = 0;
  std::string objective = "time";
  int top = 5;
  int resimulate = -1;
  std::string out;
};

constexpr int kPlanWidth = 72;

// `text` padded to kPlanWidth characters on screen: setw counts bytes, and "·" takes two.
std::string padded(std::string text) {
  const auto shown = std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  });
  if (shown < kPlanWidth) text.append(static_cast<std::size_t>(kPlanWidth - shown), ' ');
  return text;
}

std::string fixed(double v, int digits) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(digits) << v;
  return os.str();
}

std::string gib(double bytes) {
  return fixed(bytes / (1024.0 * 1024 * 1024), 1);
}

void print_result(std::ostream& os, const models::Scenario& base, const models::PlanSearchResult& r,
                  double wall_s) {
  os << "clustersim plan | " << base.model.name << " on " << r.gpus << " x "
     << base.cluster.gpu.name << " | global batch " << base.training.global_batch << "\n";
  os << "  searched " << r.enumerated << " plans: " << r.invalid << " invalid, " << r.ranked
     << " ranked by the analytical model, " << r.does_not_fit
     << " of the best did not fit in memory; " << fixed(wall_s, 2) << " s\n\n";
  os << "  " << std::left << std::setw(3) << "#" << std::setw(kPlanWidth) << "plan" << std::right
     << std::setw(8) << "est. s" << std::setw(9) << "flow s" << std::setw(7) << "MFU"
     << std::setw(15) << "memory GiB"
     << "   why it beats the next\n";
  for (std::size_t i = 0; i < r.top.size(); ++i) {
    const models::PlanCandidate& c = r.top[i];
    const double mfu = c.simulated ? c.simulated->mfu : c.estimate.mfu;  // flow's when it ran
    os << "  " << std::left << std::setw(3) << i + 1 << padded(models::describe_plan(c.scenario))
       << std::right << std::setw(8) << fixed(c.estimate.iteration_s, 3) << std::setw(9)
       << (c.simulated ? fixed(c.simulated->iteration_time_s, 3) : std::string("-")) << std::setw(6)
       << fixed(100 * mfu, 1) << "%" << std::setw(15)
       << gib(c.memory_bytes) + "/" + gib(c.capacity_bytes) + (c.tight ? "*" : " ") << "  "
       << c.reason << "\n";
  }
  if (std::any_of(r.top.begin(), r.top.end(), [](const auto& c) { return c.tight; }))
    os << "  * tight: fits only without the allocator's fragmentation allowance; whether it runs "
          "depends on fragmentation (clustersim run says how much)\n";
  if (!r.top.empty() && r.resimulated == 0)
    os << "  (flow re-simulation skipped at " << r.gpus
       << " GPUs: --resimulate K runs it for the best K, 15-60 s each at 1,024 GPUs)\n";
  if (r.top.empty())
    os << "  no plan fits in memory on " << r.gpus
       << " GPUs (every valid plan was checked); try more GPUs with --gpus, a smaller "
          "training.global_batch or seq_len\n";
  os << "\n  rule of thumb (the tutorials' decision tree):\n";
  for (const std::string& step : r.rule.steps)
    os << "    " << step << "\n";
  models::Scenario rule_plan = base;
  rule_plan.parallel = r.rule.parallel;
  os << "    -> tp " << r.rule.parallel.tp << " · pp " << r.rule.parallel.pp << " · dp "
     << r.rule.parallel.dp << " · ep " << r.rule.parallel.ep << " · "
     << models::kDataParallelNames.name(r.rule.parallel.data_parallel) << "\n";
  if (!r.top.empty()) {
    const auto& best = r.top.front().scenario.parallel;
    const bool same = best.tp == r.rule.parallel.tp && best.pp == r.rule.parallel.pp &&
                      best.ep == r.rule.parallel.ep &&
                      best.data_parallel == r.rule.parallel.data_parallel;
    os << (same ? "    the search agrees on tp, pp, ep and the data-parallel strategy\n"
                : "    the search disagrees: the rule ignores bandwidths, bubbles and memory "
                  "beyond model states; the table's reasons say what the simulation weighs\n");
  }
  if (!r.top.empty()) {
    os << "\n  best plan as flags:";
    for (const std::string& o : models::plan_overrides(r.top.front().scenario))
      os << " --set " << o;
    os << "\n";
  }
}

int run(const PlanArgs& a) {
  const auto objective = models::parse_plan_objective(a.objective);
  if (!objective)
    throw BadInput("--objective " + a.objective + ": allowed: time, tokens_per_s, cost");
  if (a.top < 1) throw BadInput("--top " + std::to_string(a.top) + ": allowed: 1 or more");
  if (!a.out.empty()) models::check_output_path(a.out, {a.file}, "--out");
  const models::Scenario base = models::load_scenario(a.file, a.overrides);
  models::PlanSearchOptions options;
  if (a.gpus > 0) options.gpus = a.gpus;
  options.objective = *objective;
  options.top = a.top;
  options.resimulate = a.resimulate;  // -1: the search's default
  Progress progress("plan search");
  options.progress = [&progress](std::string_view phase, double f) { progress.update(f, phase); };
  const auto began = std::chrono::steady_clock::now();
  const models::PlanSearchResult result = models::search_plans(base, options);
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  progress.done();
  print_result(std::cout, base, result, wall_s);
  if (!a.out.empty() && !result.top.empty()) {
    std::cout.flush();
    models::write_plan_scenario(result.top.front().scenario, a.file, a.out);
    std::cout << "  best plan scenario: " << a.out << "\n";
  }
  return kExitOk;
}

}  // namespace

void add_plan_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<PlanArgs>();
  CLI::App* cmd = app.add_subcommand(
      "plan", "Search the parallel plans of a scenario's model on its cluster: the best few");
  cmd->add_option("FILE", args->file, "Scenario file (YAML): its model, cluster and training keys")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--set", args->overrides, "Override a key before searching (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--gpus", args->gpus, "GPUs to plan for (whole nodes; default: the scenario's)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--objective", args->objective, "time | tokens_per_s | cost (GPU-s per token)")
      ->check(CLI::IsMember({"time", "tokens_per_s", "cost"}));
  cmd->add_option("--top", args->top, "Plans to list (default 5)")->check(CLI::PositiveNumber);
  cmd->add_option("--resimulate", args->resimulate,
                  "Of those, how many to re-simulate with the flow model (default: all listed up "
                  "to 256 GPUs, none beyond)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--out", args->out, "Write the best plan as a scenario file");
  cmd->callback([args, &action] { action = [args] { return run(*args); }; });
}

}  // namespace clustersim::cli
