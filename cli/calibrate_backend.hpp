// The calibration back ends as executables of their own (docs/calibration.md "Backends"): the
// simulator loads no GPU or MPI library, so `clustersim calibrate --backend cuda|mpi` replaces
// itself (exec) with clustersim-calibrate-cuda or clustersim-calibrate-mpi, found beside the
// running `clustersim` or in $CLUSTERSIM_BACKEND_DIR. Exec rather than a child process: under
// `mpirun -np N clustersim calibrate --backend mpi` each rank then *is* the back end (same process,
// same MPI environment), and Ctrl-C, stdout and the exit code need no forwarding.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "calibrate/backend.hpp"
#include "calibrate/measurements.hpp"

namespace clustersim::cli {

inline constexpr const char* kBackendDirEnv = "CLUSTERSIM_BACKEND_DIR";

// "clustersim-calibrate-cuda" for "cuda".
std::string backend_executable_name(std::string_view backend);

// The back end's executable: in $CLUSTERSIM_BACKEND_DIR when that is set (and not empty), else in
// the directory of the running executable (/proc/self/exe). A missing one is BadInput (exit 2)
// saying what to install or build.
std::filesystem::path find_backend(std::string_view backend);
// What a build without the `backend` ("cuda", "mpi") lacks, and how to get it.
std::string install_hint(std::string_view backend);
// find_backend for any executable built beside clustersim (clustersim-sweep-mpi); `hint` says
// what to install or build when it is missing.
std::filesystem::path find_companion(const std::string& name, const std::string& hint);

// Replaces this process with `program` run with `args` (argv[0] is the program's path). Returns
// only by throwing std::runtime_error, when the program cannot be started.
[[noreturn]] void exec_backend(const std::filesystem::path& program,
                               const std::vector<std::string>& args);

// `calibrate --shapes-from`: the GEMMs each scenario launches, its largest kMaxScenarioGemms by
// FLOPs (models/gemm_shapes.hpp), in the order given; a shape two scenarios share is measured
// once, where it first appears. None for no scenarios. A scenario that does not load is BadInput
// naming its file, line and key.
inline constexpr std::size_t kMaxScenarioGemms = 64;
std::vector<calibrate::GemmRequest> scenario_gemm_requests(
    const std::vector<std::string>& scenarios);

// main() of clustersim-calibrate-<backend>: `[--quick] --out PROFILE [--shapes-from SCENARIO]...`
// (cuda); runs the backend with the progress reporter (cli/progress.hpp) and Ctrl-C handling, fits,
// writes the profile atomically (the writing rank only) and returns the exit code (0 ok, 1 failure,
// 2 bad input).
int backend_main(int argc, char** argv, std::string_view backend, calibrate::BackendFn run);

}  // namespace clustersim::cli
