#include "cli/calibrate_command.hpp"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "calibrate/backend.hpp"
#include "calibrate/nccl_tests_import.hpp"
#include "calibrate/profile.hpp"

namespace clustersim::cli {

namespace {

std::atomic<bool> g_interrupted{false};
extern "C" void on_sigint(int) {
  g_interrupted.store(true);
}

// Installs the Ctrl-C handler for the lifetime of a run: the sweep stops between steps and no
// profile is written.
class InterruptGuard {
 public:
  InterruptGuard() {
    g_interrupted.store(false);
    previous_ = std::signal(SIGINT, on_sigint);
  }
  ~InterruptGuard() { std::signal(SIGINT, previous_); }
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

 private:
  void (*previous_)(int) = SIG_DFL;
};

// A one-line progress bar on stderr, redrawn in place on a terminal; silent when stderr is a
// file so logs stay readable.
void draw_progress(std::string_view phase, std::size_t done, std::size_t total) {
  if (!::isatty(STDERR_FILENO) || total == 0) return;
  constexpr std::size_t kWidth = 30;
  const std::size_t filled = done * kWidth / total;
  std::cerr << "\r[" << std::string(filled, '#') << std::string(kWidth - filled, ' ') << "] "
            << done * 100 / total << "% " << phase << "            " << std::flush;
  if (done == total) std::cerr << "\n";
}

struct CalibrateArgs {
  std::string backend;
  bool quick = false;
  std::string out;
  std::vector<std::string> logs;
  std::string import_out;
};

int run_calibrate(const CalibrateArgs& a) {
  if (a.backend.empty()) throw BadInput("calibrate: --backend cuda|mpi is required");
  if (a.out.empty()) throw BadInput("calibrate: --out PROFILE is required");
  InterruptGuard guard;
  calibrate::BenchOptions options;
  options.quick = a.quick;
  options.progress = draw_progress;
  options.cancelled = [] { return g_interrupted.load(); };
  options.table = &std::cout;
  const calibrate::Calibration c = calibrate::calibrate(a.backend, options);
  if (!c.writer) return kExitOk;  // MPI ranks other than 0
  calibrate::write_profile(c.profile, a.out);
  std::cout << "wrote " << a.out << " (" << c.profile.collectives.fits().size()
            << " collective fits, backend " << c.profile.provenance.backend << ")\n";
  return kExitOk;
}

int run_import(const CalibrateArgs& a) {
  calibrate::Profile p;
  try {
    p = calibrate::import_nccl_tests(a.logs);
  } catch (const calibrate::ImportError& e) {
    throw BadInput(e.what());
  }
  calibrate::write_profile(p, a.import_out);
  std::cout << "wrote " << a.import_out << " from " << a.logs.size()
            << " log(s): " << p.measurements.collectives.size() << " rows, "
            << p.collectives.fits().size() << " collective fits\n";
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

}  // namespace

void add_calibrate_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<CalibrateArgs>();
  CLI::App* cal = app.add_subcommand(
      "calibrate", "Measure this machine (or import nccl-tests logs) into a calibration profile");
  cal->add_option("--backend", args->backend, "cuda (all local GPUs) or mpi (under mpirun)")
      ->check(CLI::IsMember({"cuda", "mpi"}));
  cal->add_flag("--quick", args->quick, "Small sweeps: a smoke test, not a calibration");
  cal->add_option("--out", args->out, "Profile to write (JSON, written atomically)");

  CLI::App* imp = cal->add_subcommand("import-nccl-tests",
                                      "Fit a profile to nccl-tests logs (all_reduce_perf, ...)");
  imp->add_option("logs", args->logs, "nccl-tests output files")
      ->required()
      ->check(CLI::ExistingFile);
  imp->add_option("--out", args->import_out, "Profile to write")->required();

  imp->callback([args, &action] { action = [args] { return run_import(*args); }; });
  cal->callback([args, imp, &action] {
    if (imp->parsed()) return;
    action = [args] { return run_calibrate(*args); };
  });
}

}  // namespace clustersim::cli
