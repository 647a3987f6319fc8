#include "cli/validate_command.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/progress.hpp"
#include "engine/format.hpp"
#include "engine/io/atomic_file.hpp"
#include "engine/network/network_model.hpp"
#include "models/frontend.hpp"
#include "models/validation.hpp"

namespace clustersim::cli {

namespace {

struct ValidateArgs {
  std::string dir;
  std::string json_out;
  std::string network;
  std::vector<std::string> overrides;
};

// The suite shipped with the sources when no folder is named and ./validation does not exist.
std::string default_dir() {
  if (std::filesystem::is_directory("validation")) return "validation";
  return std::string(CLUSTERSIM_SOURCE_DIR) + "/validation";
}

std::string signed_percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f %%", fraction * 100.0);
  return buf;
}

void print_summary(const char* what, const models::ValidationSummary& s) {
  if (s.cases == 0) return;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f %%, worst %.1f %%", s.median * 100.0, s.worst * 100.0);
  std::cout << what << ": " << s.cases - s.failed << " of " << s.cases << " figures compared";
  if (s.failed > 0) std::cout << " (" << s.failed << " could not be simulated)";
  std::cout << "; median |error| " << buf << " (" << s.worst_row << ")\n";
  // The figures within each of the fidelity issues' bounds: "within ±5/12/15/25 %: 34/47/51/62".
  std::string bounds;
  std::string counts;
  for (std::size_t b = 0; b < s.within.size(); ++b) {
    bounds += (b ? "/" : "") +
              std::to_string(std::lround(models::ValidationSummary::kWithinBounds[b] * 100));
    counts += (b ? "/" : "") + std::to_string(s.within[b]);
  }
  std::cout << "  within ±" << bounds << " %: " << counts << " of " << s.cases - s.failed << "\n";
}

int validate(const ValidateArgs& a) {
  const std::string dir = a.dir.empty() ? default_dir() : a.dir;
  if (!std::filesystem::is_directory(dir))
    throw BadInput(dir + ": not a folder; allowed: a folder of validation cases");
  std::vector<std::string> inputs;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
    if (e.is_regular_file()) inputs.push_back(e.path().string());
  if (!a.json_out.empty()) models::check_output_path(a.json_out, inputs, "--json");

  models::ValidationOptions options;
  if (!a.network.empty()) options.network = a.network;
  options.overrides = a.overrides;
  Progress progress("validating " + dir);
  options.progress = [&progress](std::string_view file, int i, int n) {
    progress.update(static_cast<double>(i) / n, file);
  };
  models::ValidationReport report;
  try {
    report = models::run_validation(dir, options);
  } catch (const std::invalid_argument& e) {
    throw BadInput(e.what());
  }
  progress.done();

  char line[512];
  std::snprintf(line, sizeof line, "%-52s %-22s %12s %12s %9s  %s\n", "case", "metric", "published",
                "simulated", "error", "compute/recompute/comm/idle");
  if (!report.rows.empty()) std::cout << line;
  for (const auto& r : report.rows) {
    if (!r.failure.empty()) {
      std::snprintf(line, sizeof line, "%-52s %-22s %12.4g %12s %9s  ", r.file.c_str(),
                    r.metric.c_str(), r.published, "-", "-");
      std::cout << line << "not simulated: " << r.failure << "\n";
      continue;
    }
    std::snprintf(line, sizeof line, "%-52s %-22s %12.4g %12.4g %9s  %2.0f/%2.0f/%2.0f/%2.0f %%\n",
                  r.file.c_str(), r.metric.c_str(), r.published, r.simulated,
                  signed_percent(r.error).c_str(), r.shares.compute * 100, r.shares.recompute * 100,
                  r.shares.communication * 100, r.shares.idle * 100);
    std::cout << line;
  }
  if (!report.collectives.empty()) {
    std::snprintf(line, sizeof line, "\n%-52s %-10s %10s %12s %12s %9s  %s\n", "collective table",
                  "size", "compared", "published", "simulated", "error",
                  "algorithm/protocol/channels");
    std::cout << line;
  }
  for (const auto& c : report.collectives) {
    if (c.excluded) {
      if (c.bytes > 0.0)  // one row of a compared file
        std::cout << c.file << " @ " << engine::format_bytes(c.bytes)
                  << ": not compared: " << c.reason << "\n";
      else
        std::cout << c.file << ": not compared: " << c.reason << "\n";
      continue;
    }
    // Below 1 MiB the time is compared, or the bus bandwidth where a source gives no time.
    const bool small = c.small() && c.published_time_us > 0.0;
    std::snprintf(
        line, sizeof line, "%-52s %-10s %10s %12.4g %12.4g %9s  %s/%s/%d\n", c.file.c_str(),
        engine::format_bytes(c.bytes).c_str(), small ? "time us" : "busbw GB/s",
        small ? c.published_time_us : c.published_busbw_GBps,
        small ? c.simulated_time_us : c.simulated_busbw_GBps, signed_percent(c.error()).c_str(),
        c.algorithm.c_str(), c.protocol.c_str(), c.channels);
    std::cout << line;
  }
  std::cout << "\n";
  print_summary("time and throughput", report.time);
  print_summary("memory", report.memory);
  print_summary("collectives >= 1 MiB (bus bandwidth)", report.collectives_large);
  print_summary("collectives < 1 MiB (time)", report.collectives_small);
  if (!a.json_out.empty()) {
    engine::write_file_atomically(a.json_out, [&](std::ostream& os) {
      os << models::validation_to_json(report).dump(2) << "\n";
    });
    std::cout << "  report JSON: " << a.json_out << "\n";
  }
  return kExitOk;
}

}  // namespace

void add_validate_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<ValidateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "validate", "Simulate every published validation case and report the error");
  cmd->add_option("DIR", args->dir,
                  "Folder of validation cases (default: ./validation, else the shipped suite)");
  cmd->add_option("--json", args->json_out, "Write the report as JSON here");
  cmd->add_option("--network", args->network, "Network model for every case")
      ->check(CLI::IsMember(engine::network_model_names()));
  cmd->add_option("--set", args->overrides,
                  "Override a key of every case, e.g. --set cluster.gpu.sustained_compute=0.9 "
                  "(repeatable; what-if studies and fitting, docs/fidelity.md)")
      ->allow_extra_args(false);
  cmd->callback([args, &action] { action = [args] { return validate(*args); }; });
}

}  // namespace clustersim::cli
