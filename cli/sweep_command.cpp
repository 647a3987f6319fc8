#include "cli/sweep_command.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

#include "cli/calibrate_backend.hpp"
#include "cli/progress.hpp"
#include "engine/network/network_model.hpp"

namespace clustersim::cli {

namespace {

// Rows are printed one per line up to this many points; beyond, only the summary.
constexpr std::size_t kMaxRowsPrinted = 40;
constexpr const char* kSweepMpiExecutable = "clustersim-sweep-mpi";
constexpr const char* kSweepMpiHint =
    "this build has no MPI sweep; install an MPI (e.g. Open MPI: apt install libopenmpi-dev "
    "openmpi-bin) and rebuild with -DCLUSTERSIM_WITH_MPI=ON";
constexpr auto kCheckpointEvery = std::chrono::seconds(5);

// Whether this process is one rank of several started by mpirun (Open MPI, MPICH/Hydra).
bool under_mpirun_with_several_ranks() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char* v = std::getenv(name); v != nullptr && std::atoi(v) > 1) return true;
  return false;
}

std::vector<std::string> as_argv(const SweepArgs& a) {
  std::vector<std::string> argv{a.file};
  for (const auto& o : a.overrides)
    argv.insert(argv.end(), {"--set", o});
  for (const auto& v : a.vary)
    argv.insert(argv.end(), {"--vary", v});
  for (const auto& [flag, value] : {std::pair{"--csv", a.csv_out},
                                    {"--json", a.json_out},
                                    {"--resume", a.resume},
                                    {"--network", a.network}})
    if (!value.empty()) argv.insert(argv.end(), {flag, value});
  if (a.jobs != 0) argv.insert(argv.end(), {"--jobs", std::to_string(a.jobs)});
  return argv;
}

std::string point_text(const models::SweepResult& r, const models::SweepRow& row) {
  std::string text;
  for (std::size_t a = 0; a < r.axes.size(); ++a)
    text += (a ? " " : "") + r.axes[a].key + "=" + row.values[a];
  return text;
}

std::string figure(const models::SweepRow& row, const char* key) {
  if (!row.result.contains(key)) return "-";
  if (!row.result[key].is_number()) return "unknown";  // null: a Chakra workload's tokens/s
  std::ostringstream os;
  os << std::setprecision(4) << row.result[key].get<double>();
  return os.str();
}

const models::SweepRow* row_at(const models::SweepResult& r, std::size_t index) {
  const auto it =
      std::lower_bound(r.rows.begin(), r.rows.end(), index,
                       [](const models::SweepRow& row, std::size_t i) { return row.index < i; });
  return it != r.rows.end() && it->index == index ? &*it : nullptr;
}

void print_summary(std::ostream& os, const models::SweepResult& r) {
  std::size_t ran = 0, invalid = 0, failed = 0;
  for (const auto& row : r.rows)
    (row.status == models::SweepStatus::ok        ? ran
     : row.status == models::SweepStatus::invalid ? invalid
                                                  : failed)++;
  os << "clustersim sweep | " << r.scenario << " | " << r.rows.size() << " points: " << ran
     << " ran, " << invalid << " invalid, " << failed << " failed";
  if (r.resumed) os << " (" << r.resumed << " resumed)";
  os << "\n";
  if (r.rows.size() <= kMaxRowsPrinted)
    for (const auto& row : r.rows) {
      os << "  #" << row.index << "  " << point_text(r, row) << "  ";
      if (row.status == models::SweepStatus::ok)
        os << "iteration " << figure(row, "iteration_time_s") << " s, "
           << figure(row, "tokens_per_s") << " tokens/s, memory "
           << (!row.result.contains("memory.fits")      ? "unknown"
               : row.result.value("memory.fits", false) ? "fits"
                                                        : "DOES NOT FIT")
           << "\n";
      else
        os << to_string(row.status) << ": " << row.reason << "\n";
    }
  else
    for (const auto& row : r.rows)
      if (row.status != models::SweepStatus::ok)
        os << "  #" << row.index << "  " << point_text(r, row) << "  " << to_string(row.status)
           << ": " << row.reason << "\n";
  if (r.best.empty()) os << "  best: none (no point ran and fit in memory)\n";
  for (const auto& b : r.best)
    os << "  best " << (b.minimize ? "(lowest) " : "(highest) ") << b.objective << ": #" << b.index
       << "  " << point_text(r, *row_at(r, b.index)) << "  (" << std::setprecision(4) << b.value
       << ")\n";
}

}  // namespace

void add_sweep_options(CLI::App& cmd, SweepArgs& args) {
  cmd.add_option("FILE", args.file, "Scenario file (YAML)")->required()->check(CLI::ExistingFile);
  cmd.add_option("--vary", args.vary,
                 "KEY=V1,V2,... or a range A..B, A..B+STEP, A..BxFACTOR (repeatable: the product)")
      ->required()
      ->allow_extra_args(false);
  cmd.add_option("--set", args.overrides, "Override a key for every point (repeatable)")
      ->allow_extra_args(false);
  cmd.add_option("--csv", args.csv_out, "Write one row per point as CSV here");
  cmd.add_option("--json", args.json_out, "Write the sweep as JSON here");
  cmd.add_option("--resume", args.resume,
                 "Sweep JSON to continue: its rows are kept, the rest run, and it is rewritten "
                 "as points finish");
  cmd.add_option("--network", args.network, "Network model (overrides simulation.network_model)")
      ->check(CLI::IsMember(engine::network_model_names()));
  cmd.add_option("--jobs", args.jobs, "Points run at once (default: every core)");
}

models::SweepRequest sweep_request(const SweepArgs& a) {
  models::SweepRequest request;
  request.base.scenario = a.file;
  request.base.overrides = a.overrides;
  if (!a.network.empty()) request.base.network = a.network;
  for (const std::string& v : a.vary)
    request.axes.push_back(models::parse_sweep_axis(v));
  request.jobs = a.jobs;
  return request;
}

int run_sweep_command(const SweepArgs& a, const models::PointExecutor& executor) {
  std::vector<std::pair<std::string, std::string>> outputs;
  for (const auto& [path, flag] :
       {std::pair{a.csv_out, "--csv"}, {a.json_out, "--json"}, {a.resume, "--resume"}})
    if (!path.empty() && !(flag == std::string("--json") && a.json_out == a.resume))
      outputs.emplace_back(path, flag);
  models::check_output_paths(outputs, {a.file});
  models::SweepRequest request = sweep_request(a);
  if (!a.resume.empty()) request.resumed = models::read_sweep_rows(a.resume, request.axes);

  // The sweep is checkpointed into --resume (or --json) as points finish, so an interrupted
  // sweep loses at most a few seconds of points.
  const std::string checkpoint = !a.resume.empty() ? a.resume : a.json_out;
  std::map<std::size_t, models::SweepRow> finished;
  for (const auto& row : request.resumed)
    finished[row.index] = row;
  auto last_checkpoint = std::chrono::steady_clock::now();
  request.on_row = [&](const models::SweepRow& row) {
    finished[row.index] = row;
    if (checkpoint.empty() || std::chrono::steady_clock::now() - last_checkpoint < kCheckpointEvery)
      return;
    models::SweepResult partial{a.file, request.axes, {}, {}, 0};
    for (const auto& [index, r] : finished)
      partial.rows.push_back(r);
    partial.best = models::best_points(partial.rows);
    models::write_sweep_json(partial, checkpoint);
    last_checkpoint = std::chrono::steady_clock::now();
  };
  Progress progress("sweeping " + std::to_string(models::sweep_points(request.axes).size()) +
                    " points");
  request.progress = [&progress](std::size_t done, std::size_t total) {
    progress.update(done, total);
  };
  const models::SweepResult result = models::run_sweep(request, executor);
  progress.done();

  print_summary(std::cout, result);
  std::cout.flush();
  for (const std::string& path : {a.json_out, a.resume == a.json_out ? std::string() : a.resume})
    if (!path.empty()) {
      models::write_sweep_json(result, path);
      std::cout << "  sweep JSON: " << path << "\n";
    }
  if (!a.csv_out.empty()) {
    models::write_sweep_csv(result, a.csv_out);
    std::cout << "  sweep CSV: " << a.csv_out << "\n";
  }
  return kExitOk;
}

void add_sweep_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<SweepArgs>();
  CLI::App* cmd = app.add_subcommand(
      "sweep", "Run a scenario over the product of --vary values, in parallel (or under mpirun)");
  add_sweep_options(*cmd, *args);
  cmd->callback([args, &action] {
    action = [args] {
      // Under mpirun each rank becomes clustersim-sweep-mpi: this binary links no MPI library.
      if (under_mpirun_with_several_ranks())
        exec_backend(find_companion(kSweepMpiExecutable, kSweepMpiHint), as_argv(*args));
      return run_sweep_command(*args, {});
    };
  });
}

}  // namespace clustersim::cli
