#include "cli/compare_command.hpp"

#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "calibrate/compare.hpp"
#include "calibrate/kineto_map.hpp"
#include "engine/io/atomic_file.hpp"
#include "models/frontend.hpp"

namespace clustersim::cli {

namespace {

struct CompareArgs {
  std::string predicted, measured;
  std::string trace_out, json_out;
  std::size_t top = 10;
  std::string scenario;  // for a Kineto MEASURED: the plan to map it onto
  std::vector<std::string> overrides;
};

nlohmann::ordered_json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw BadInput(path + ": cannot be read");
  try {
    return nlohmann::ordered_json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw BadInput(path + ": not JSON: " + e.what());
  }
}

int run_compare(const CompareArgs& a) {
  std::vector<std::pair<std::string, std::string>> outputs;
  if (!a.trace_out.empty()) outputs.emplace_back(a.trace_out, "--trace");
  if (!a.json_out.empty()) outputs.emplace_back(a.json_out, "--json");
  models::check_output_paths(outputs, {a.predicted, a.measured});
  const nlohmann::ordered_json predicted = read_json(a.predicted);
  const nlohmann::ordered_json measured = read_json(a.measured);
  calibrate::Comparison c;
  nlohmann::ordered_json trace;
  std::optional<calibrate::KinetoMapping> kineto;
  std::optional<models::Prediction> plan;
  if (calibrate::is_kineto_trace(measured)) {
    if (a.scenario.empty())
      throw BadInput(a.measured +
                     " is a Kineto (PyTorch profiler) trace: give --scenario FILE (and its --set "
                     "values) to map its kernels onto the plan's ops");
    models::RunRequest request;
    request.scenario = a.scenario;
    request.overrides = a.overrides;
    request.every_rank = true;  // the trace may be any rank's
    plan = models::predict(request);
    if (predicted.value("scenario", std::string()) != plan->scenario.name)
      throw BadInput(a.predicted + ": scenario \"" + predicted.value("scenario", std::string()) +
                     "\" is not --scenario's (\"" + plan->scenario.name + "\")");
  }
  try {
    if (plan) {
      const auto& s = plan->output.built.schedule;
      kineto = calibrate::map_kineto_trace(s, measured, a.measured);
      c = calibrate::compare_kineto(s, plan->output.timeline, plan->scenario.name, *kineto, a.top);
      if (!a.trace_out.empty())
        trace = calibrate::merged_trace(
            calibrate::kineto_ops_json(s, plan->output.timeline, *kineto), a.measured);
    } else {
      c = calibrate::compare_results(predicted, measured, a.predicted, a.measured, a.top);
      if (!a.trace_out.empty()) trace = calibrate::merged_trace(measured, a.measured);
    }
  } catch (const calibrate::CompareError& e) {
    throw BadInput(e.what());
  } catch (const nlohmann::json::exception& e) {
    throw BadInput(a.measured + ": unexpected content: " + e.what());
  }
  calibrate::print_comparison(std::cout, c);
  if (kineto) {
    // Say what could not be mapped, with a few examples of each side.
    const auto& s = plan->output.built.schedule;
    std::cout << "  Kineto trace of rank " << kineto->rank << ": iteration = the rank's span; "
              << "categories = sums of mapped op durations\n  not mapped: "
              << kineto->unmapped_ops.size() << " op(s) of the plan";
    for (std::size_t i = 0; i < std::min<std::size_t>(3, kineto->unmapped_ops.size()); ++i)
      std::cout << (i ? ", " : " (") << "op " << kineto->unmapped_ops[i] << " '"
                << s.label(s.ops[kineto->unmapped_ops[i]]) << "'"
                << (i + 1 == std::min<std::size_t>(3, kineto->unmapped_ops.size()) ? ")" : "");
    std::cout << ", " << kineto->unmapped_kernels.size() << " kernel(s) of the trace";
    for (std::size_t i = 0; i < std::min<std::size_t>(3, kineto->unmapped_kernels.size()); ++i)
      std::cout << (i ? ", " : " (") << kineto->unmapped_kernels[i]
                << (i + 1 == std::min<std::size_t>(3, kineto->unmapped_kernels.size()) ? ")" : "");
    std::cout << "\n";
  }
  if (!a.json_out.empty()) {
    const auto j = calibrate::comparison_to_json(c);
    engine::write_file_atomically(a.json_out, [&](std::ostream& os) { os << j.dump(2) << "\n"; });
    std::cout << "  comparison JSON: " << a.json_out << "\n";
  }
  if (!a.trace_out.empty()) {
    engine::write_file_atomically(a.trace_out,
                                  [&](std::ostream& os) { os << trace.dump() << "\n"; });
    std::cout << "  merged trace: " << a.trace_out << " (open it in https://ui.perfetto.dev)\n";
  }
  return kExitOk;
}

}  // namespace

void add_compare_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* cmd = app.add_subcommand(
      "compare", "How far a prediction was off: a result JSON against `execute`'s measured JSON");
  cmd->add_option("PREDICTED", args->predicted, "Result JSON of `clustersim run --json`")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option(
         "MEASURED", args->measured,
         "Result JSON of `clustersim execute --json`, or a PyTorch profiler (Kineto) trace")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--trace", args->trace_out,
                  "Write a trace with predicted and measured lanes side by side");
  cmd->add_option("--json", args->json_out, "Write the comparison as JSON");
  cmd->add_option("--scenario", args->scenario,
                  "With a Kineto trace as MEASURED: the scenario whose ops it is mapped onto")
      ->check(CLI::ExistingFile);
  cmd->add_option("--set", args->overrides, "With --scenario: override a key, as in run")
      ->allow_extra_args(false);
  cmd->add_option("--top", args->top, "How many of the largest per-op errors to list")
      ->check(CLI::Range(0, 100000));
  cmd->callback([args, &action] { action = [args] { return run_compare(*args); }; });
}

}  // namespace clustersim::cli
