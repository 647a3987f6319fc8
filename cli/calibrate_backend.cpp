#include "cli/calibrate_backend.hpp"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <set>
#include <stdexcept>
#include <tuple>

#include "calibrate/profile.hpp"
#include "cli/command.hpp"
#include "cli/progress.hpp"
#include "models/gemm_shapes.hpp"

namespace clustersim::cli {

namespace fs = std::filesystem;

std::string install_hint(std::string_view backend) {
  if (backend == "cuda")
    return "this build has no CUDA back end; install CUDA 13 + NCCL and rebuild with "
           "-DCLUSTERSIM_WITH_CUDA=ON";
  return "this build has no MPI back end; install an MPI (e.g. Open MPI: apt install "
         "libopenmpi-dev openmpi-bin) and rebuild with -DCLUSTERSIM_WITH_MPI=ON";
}

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

int run(std::string_view backend, calibrate::BackendFn fn, bool quick, const std::string& out,
        std::vector<calibrate::GemmRequest> gemm_shapes) {
  InterruptGuard guard;
  Progress progress("calibrating (" + std::string(backend) + ")");
  calibrate::BenchOptions options;
  options.quick = quick;
  options.gemm_shapes = std::move(gemm_shapes);
  options.progress = [&progress](std::string_view phase, std::size_t done, std::size_t total) {
    progress.update(done, total, phase);
  };
  options.cancelled = [] { return g_interrupted.load(); };
  options.table = &std::cout;
  const calibrate::Calibration c = calibrate::calibrate(fn, options);
  progress.done();
  if (!c.writer) return kExitOk;  // MPI ranks other than 0
  calibrate::write_profile(c.profile, out);
  std::cout << "wrote " << out << " (" << c.profile.collectives.fits().size()
            << " collective fits, backend " << c.profile.provenance.backend << ")\n";
  return kExitOk;
}

}  // namespace

std::vector<calibrate::GemmRequest> scenario_gemm_requests(
    const std::vector<std::string>& scenarios) {
  std::vector<calibrate::GemmRequest> out;
  std::set<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t, std::string, bool,
                      bool>>
      seen;
  for (const std::string& scenario : scenarios) {
    try {
      for (const models::ScenarioGemm& g :
           models::scenario_gemm_shapes(models::load_scenario(scenario), kMaxScenarioGemms))
        if (seen.emplace(g.m, g.n, g.k, g.batch, g.dtype, g.trans_a, g.trans_b).second)
          out.push_back({g.m, g.n, g.k, g.batch, g.dtype, g.trans_a, g.trans_b});
    } catch (const models::ScenarioError& e) {
      throw BadInput(e.what());
    }
  }
  return out;
}

std::string backend_executable_name(std::string_view backend) {
  return "clustersim-calibrate-" + std::string(backend);
}

fs::path find_backend(std::string_view backend) {
  return find_companion(backend_executable_name(backend), install_hint(backend));
}

fs::path find_companion(const std::string& name, const std::string& hint) {
  fs::path dir;
  std::string where;
  if (const char* env = std::getenv(kBackendDirEnv); env != nullptr && *env != '\0') {
    dir = env;
    where = "in " + std::string(kBackendDirEnv) + "=" + env;
  } else {
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    if (ec)
      throw BadInput("cannot tell where " + name + " is: /proc/self/exe: " + ec.message() +
                     "; set " + kBackendDirEnv + " to the directory that holds it");
    dir = self.parent_path();
    where = "beside " + self.string();
  }
  const fs::path program = dir / name;
  std::error_code ec;
  if (!fs::is_regular_file(program, ec)) throw BadInput(name + " not found " + where + ": " + hint);
  return program;
}

void exec_backend(const fs::path& program, const std::vector<std::string>& args) {
  std::vector<char*> argv;
  std::string path = program.string();
  argv.push_back(path.data());
  std::vector<std::string> copies = args;
  for (std::string& a : copies)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  std::cout.flush();
  std::cerr.flush();
  ::execv(path.c_str(), argv.data());
  throw std::runtime_error("cannot start " + path + ": " + std::strerror(errno));
}

int backend_main(int argc, char** argv, std::string_view backend, calibrate::BackendFn fn) {
  const std::string name = backend_executable_name(backend);
  CLI::App app{name + ": measure this machine into a calibration profile (" +
               (backend == "mpi" ? "run under mpirun; " : "") + "usually started by `clustersim " +
               "calibrate --backend " + std::string(backend) + "`)"};
  app.set_version_flag("--version", name + " " + CLUSTERSIM_VERSION);
  bool quick = false;
  std::string out;
  std::vector<std::string> shapes_from;
  app.add_flag("--quick", quick, "Small sweeps: a smoke test, not a calibration");
  app.add_option("--out", out, "Profile to write (JSON, written atomically)")->required();
  if (backend == "cuda")
    app.add_option("--shapes-from", shapes_from,
                   "Also measure the GEMM shapes these scenarios launch (each one's largest " +
                       std::to_string(kMaxScenarioGemms) + " by FLOPs; repeatable)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitBadInput;
  }
  try {
    return run(backend, fn, quick, out, scenario_gemm_requests(shapes_from));
  } catch (const BadInput& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitFailure;
  }
}

}  // namespace clustersim::cli
