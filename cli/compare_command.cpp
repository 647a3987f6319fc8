#include "cli/compare_command.hpp"

#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include "calibrate/compare.hpp"
#include "engine/io/atomic_file.hpp"
#include "models/frontend.hpp"

namespace clustersim::cli {

namespace {

struct CompareArgs {
  std::string predicted, measured;
  std::string trace_out, json_out;
  std::size_t top = 10;
};

nlohmann::ordered_json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw BadInput(path + ": cannot be read");
  try {
    return nlohmann::ordered_json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
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
  try {
    c = calibrate::compare_results(predicted, measured, a.predicted, a.measured, a.top);
    if (!a.trace_out.empty()) trace = calibrate::merged_trace(measured, a.measured);
  } catch (const calibrate::CompareError& e) {
    throw BadInput(e.what());
  } catch (const nlohmann::json::exception& e) {
    throw BadInput(a.measured + ": unexpected content: " + e.what());
  }
  calibrate::print_comparison(std::cout, c);
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
  cmd->add_option("MEASURED", args->measured, "Result JSON of `clustersim execute --json`")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--trace", args->trace_out,
                  "Write a trace with predicted and measured lanes side by side");
  cmd->add_option("--json", args->json_out, "Write the comparison as JSON");
  cmd->add_option("--top", args->top, "How many of the largest per-op errors to list")
      ->check(CLI::Range(0, 100000));
  cmd->callback([args, &action] { action = [args] { return run_compare(*args); }; });
}

}  // namespace clustersim::cli
