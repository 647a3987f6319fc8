#include "cli/execute_options.hpp"

#include "engine/format.hpp"

namespace clustersim::cli {

void add_execute_options(CLI::App& app, calibrate::ExecuteOptions& o) {
  app.add_option("FILE", o.scenario, "Scenario file (YAML)")->required()->check(CLI::ExistingFile);
  app.add_option("--set", o.overrides,
                 "Override a key by its path, e.g. --set parallel.tp=4 (repeatable)")
      ->allow_extra_args(false);
  app.add_option("--iterations", o.iterations, "Measured runs of the schedule (the median is kept)")
      ->check(CLI::Range(1, 1000));
  app.add_option("--warmup", o.warmup, "Runs before the measured ones, discarded")
      ->check(CLI::Range(0, 1000));
  app.add_option("--work-scale", o.work_scale,
                 "Executed FLOPs and bytes = the schedule's x this (docs/execution.md)")
      ->check(CLI::Range(1e-6, 1e6));
  app.add_option("--op-timeout", o.op_timeout_s,
                 "Seconds an op may wait for its peers before the job ends (watchdog)")
      ->check(CLI::Range(0.1, 86400.0));
  app.add_option("--json", o.json_out, "Write the measured result JSON here (rank 0)");
  app.add_option("--trace", o.trace_out, "Write the measured Chrome/Perfetto trace here (rank 0)");
}

std::vector<std::string> execute_arguments(const calibrate::ExecuteOptions& o) {
  std::vector<std::string> a{o.scenario};
  for (const std::string& s : o.overrides)
    a.insert(a.end(), {"--set", s});
  a.insert(a.end(),
           {"--iterations", std::to_string(o.iterations), "--warmup", std::to_string(o.warmup),
            "--work-scale", engine::format_number("%.17g", o.work_scale), "--op-timeout",
            engine::format_number("%.17g", o.op_timeout_s)});
  if (!o.json_out.empty()) a.insert(a.end(), {"--json", o.json_out});
  if (!o.trace_out.empty()) a.insert(a.end(), {"--trace", o.trace_out});
  return a;
}

}  // namespace clustersim::cli
