#include "cli/calibrate_command.hpp"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "calibrate/from_execution.hpp"
#include "calibrate/gemm_report.hpp"
#include "calibrate/nccl_tests_import.hpp"
#include "calibrate/profile.hpp"
#include "cli/calibrate_backend.hpp"
#include "engine/schedule.hpp"
#include "models/frontend.hpp"

namespace clustersim::cli {

namespace {

struct CalibrateArgs {
  std::string backend;
  bool quick = false;
  std::string out;
  std::vector<std::string> logs;
  std::string import_out;
  std::string collective;   // import: which collective the logs measured, when they do not say
  std::uint32_t ranks = 0;  // import: the shape, when the logs do not say it (0 = not stated)
  std::uint32_t nodes = 0;
  std::string measured;  // from-execution: the JSON of `clustersim execute`
  std::string measured_out;
  std::vector<std::string> shapes_from;  // also measure these scenarios' GEMM shapes (cuda)
  std::string report_profile;            // gemm-report: the profile whose GEMMs are compared
  std::string report_gpu;                // gemm-report: the GPU preset they are compared with
};

// Measuring needs a GPU or MPI library, which clustersim does not load: it becomes the back end's
// executable (cli/calibrate_backend.hpp), which does the run, the fit and the writing.
int run_calibrate(const CalibrateArgs& a) {
  if (a.backend.empty()) throw BadInput("calibrate: --backend cuda|mpi is required");
  if (a.out.empty()) throw BadInput("calibrate: --out PROFILE is required");
  // Before measuring, not after.
  models::check_output_path(a.out, a.shapes_from, "--out");
  std::vector<std::string> args;
  if (a.quick) args.emplace_back("--quick");
  args.insert(args.end(), {"--out", a.out});
  if (!a.shapes_from.empty()) {
    if (a.backend != "cuda")
      throw BadInput("calibrate: --shapes-from measures GEMMs, which only --backend cuda does");
    // A scenario that does not load is refused here, before the back end starts.
    const auto shapes = scenario_gemm_requests(a.shapes_from);
    std::cout << "measuring " << shapes.size() << " GEMM shapes of ";
    for (std::size_t i = 0; i < a.shapes_from.size(); ++i)
      std::cout << (i == 0 ? "" : ", ") << a.shapes_from[i];
    std::cout << " besides the grid\n";
    for (const std::string& s : a.shapes_from)
      args.insert(args.end(), {"--shapes-from", std::filesystem::absolute(s).string()});
  }
  exec_backend(find_backend(a.backend), args);
}

int run_import(const CalibrateArgs& a) {
  models::check_output_path(a.import_out, a.logs, "--out");
  calibrate::Profile p;
  std::vector<std::string> summary;
  try {
    p = calibrate::import_nccl_tests(a.logs, {a.collective, {a.ranks, a.nodes}}, &summary);
  } catch (const calibrate::ImportError& e) {
    throw BadInput(e.what());
  }
  calibrate::write_profile(p, a.import_out);
  std::cout << "wrote " << a.import_out << " from " << a.logs.size()
            << " log(s): " << p.measurements.collectives.size() << " rows, "
            << p.collectives.fits().size() << " collective fits\n";
  for (const auto& line : summary)
    std::cout << "  " << line << "\n";
  for (const auto& f : p.collectives.fits()) {
    std::cout << "  " << engine::to_string(f.type) << " over " << f.shape.str() << ":";
    for (const auto& r : f.ranges)
      std::cout << " [" << r.min_bytes << ".." << r.max_bytes << " B: alpha " << r.alpha_s * 1e6
                << " us, busbw " << r.busbw / 1e9 << " GB/s, rms err " << r.rms_relative_error * 100
                << " %]";
    std::cout << "\n";
  }
  return kExitOk;
}

// A profile fitted to an execution's measured times (calibrate/from_execution.hpp).
int run_from_execution(const CalibrateArgs& a) {
  models::check_output_path(a.measured_out, {a.measured}, "--out");
  std::ifstream in(a.measured);
  if (!in) throw BadInput(a.measured + ": cannot be read");
  nlohmann::json measured;
  try {
    measured = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw BadInput(a.measured + ": not JSON: " + e.what());
  }
  calibrate::Profile p;
  try {
    p = calibrate::profile_from_execution(measured, a.measured);
  } catch (const calibrate::ImportError& e) {
    throw BadInput(e.what());
  } catch (const nlohmann::json::exception& e) {
    throw BadInput(a.measured + ": unexpected content: " + e.what());
  }
  calibrate::write_profile(p, a.measured_out);
  std::cout << "wrote " << a.measured_out << " from " << a.measured << ": "
            << p.measurements.gemms.size() << " GEMM sizes, " << p.measurements.collectives.size()
            << " collective rows, " << p.collectives.fits().size() << " collective fits\n";
  return kExitOk;
}

// Each GEMM of a profile beside the kernel model's prediction on a preset
// (calibrate/gemm_report.hpp).
int run_gemm_report(const CalibrateArgs& a) {
  const models::GpuSpec* gpu = models::find_gpu(a.report_gpu);
  if (gpu == nullptr)
    throw BadInput("calibrate gemm-report: --gpu: unknown GPU preset '" + a.report_gpu +
                   "' (`clustersim presets` lists them)");
  calibrate::Profile p;
  try {
    p = calibrate::read_profile(a.report_profile);
  } catch (const std::exception& e) {
    throw BadInput(e.what());
  }
  if (p.measurements.gemms.empty())
    throw BadInput(a.report_profile +
                   ": measurements.gemms is empty: the profile measured no GEMM");
  calibrate::GemmReport report;
  try {
    report = calibrate::compare_gemms(p.measurements, *gpu);
  } catch (const std::invalid_argument& e) {
    throw BadInput(a.report_profile + ": measurements.gemms: " + e.what());
  }
  std::cout << a.report_profile << " (measured on " << p.provenance.gpu << ")\n";
  calibrate::print_gemm_report(std::cout, report);
  return kExitOk;
}

}  // namespace

void add_calibrate_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<CalibrateArgs>();
  CLI::App* cal = app.add_subcommand(
      "calibrate", "Measure this machine (or import nccl-tests logs) into a calibration profile");
  cal->add_option("--backend", args->backend, "cuda (all local GPUs) or mpi (under mpirun)")
      ->check(CLI::IsMember({"cuda", "mpi"}));
  cal->add_flag("--quick", args->quick, "Small sweeps: a smoke test, not a calibration");
  cal->add_option("--shapes-from", args->shapes_from,
                  "Also measure the GEMM shapes these scenarios launch (cuda; each one's largest "
                  "64 by FLOPs; repeatable)");
  cal->add_option("--out", args->out, "Profile to write (JSON, written atomically)");

  CLI::App* imp = cal->add_subcommand("import-nccl-tests",
                                      "Fit a profile to nccl-tests logs (all_reduce_perf, ...)");
  imp->add_option("logs", args->logs, "nccl-tests output files")
      ->required()
      ->check(CLI::ExistingFile);
  imp->add_option("--out", args->import_out, "Profile to write")->required();
  std::vector<std::string> collectives;
  for (const auto& [type, name] : engine::kCollectiveTypeNames.entries())
    collectives.emplace_back(name);
  imp->add_option("--collective", args->collective,
                  "The collective the logs measured, for logs of older nccl-tests that do not "
                  "say (no '# Collective test starting' line)")
      ->check(CLI::IsMember(collectives));
  imp->add_option("--ranks", args->ranks,
                  "Ranks every test ran on, for logs without '# Rank' lines whose collective's "
                  "busbw does not carry it (broadcast, reduce, sendrecv); conflicting evidence is "
                  "an error")
      ->check(CLI::Range(1u, 1u << 24));
  imp->add_option("--nodes", args->nodes,
                  "Nodes every test ran on, for logs whose '# Rank' lines do not name every "
                  "host")
      ->check(CLI::Range(1u, 1u << 20));

  CLI::App* from = cal->add_subcommand(
      "from-execution", "Fit a profile to the measured times of `clustersim execute --json`");
  from->add_option("MEASURED", args->measured, "Result JSON of `clustersim execute`")
      ->required()
      ->check(CLI::ExistingFile);
  from->add_option("--out", args->measured_out, "Profile to write")->required();

  CLI::App* report = cal->add_subcommand(
      "gemm-report", "Each GEMM a profile measured beside the kernel model's prediction");
  report->add_option("PROFILE", args->report_profile, "A calibration profile")
      ->required()
      ->check(CLI::ExistingFile);
  report->add_option("--gpu", args->report_gpu, "The GPU preset to compare with")->required();

  imp->callback([args, &action] { action = [args] { return run_import(*args); }; });
  from->callback([args, &action] { action = [args] { return run_from_execution(*args); }; });
  report->callback([args, &action] { action = [args] { return run_gemm_report(*args); }; });
  cal->callback([args, imp, from, report, &action] {
    if (imp->parsed() || from->parsed() || report->parsed()) return;
    action = [args] { return run_calibrate(*args); };
  });
}

}  // namespace clustersim::cli
