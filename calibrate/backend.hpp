// The one backend interface of `clustersim calibrate` (DESIGN.md "Folders and layers"): each
// backend runs its microbenchmarks and returns raw measurements; calibrate() fits them. The CUDA
// and MPI backends compile only when found; asking for one that is not built is a clear error.
#pragma once

#include <functional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>

#include "calibrate/measurements.hpp"
#include "calibrate/profile.hpp"

namespace clustersim::calibrate {

// The user interrupted (Ctrl-C): nothing is written.
class Cancelled : public std::runtime_error {
 public:
  Cancelled() : std::runtime_error("calibration interrupted; no profile written") {}
};

// The hardware or library the backend needs is missing (no GPU, a single MPI rank, not built).
class BackendUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct BenchOptions {
  bool quick = false;
  // Called after each step (phase name, steps done, steps in all), on the writing rank only.
  std::function<void(std::string_view, std::size_t, std::size_t)> progress;
  // Polled between steps; true stops the run with Cancelled.
  std::function<bool()> cancelled;
  // Where the nccl-tests-like table goes (the writing rank only); nullptr for none.
  std::ostream* table = nullptr;
};

struct BenchResult {
  Provenance provenance;
  Measurements measurements;
  bool writer = true;  // false on MPI ranks other than 0: they measure but write nothing
};

bool backend_built(std::string_view backend);  // "cuda" | "mpi"
BenchResult run_backend(std::string_view backend, const BenchOptions& options);

// Runs the backend and fits; `writer` says whether this process should write the profile.
struct Calibration {
  Profile profile;
  bool writer = true;
};
Calibration calibrate(std::string_view backend, const BenchOptions& options);

// Prints one nccl-tests-like row ("size count type time algbw busbw #wrong") and its header.
void print_collective_header(std::ostream& out, std::string_view collective, std::uint32_t ranks);
void print_collective_row(std::ostream& out, const CollectiveMeasurement& m);

#ifdef CLUSTERSIM_HAVE_MPI
BenchResult run_mpi_benchmarks(const BenchOptions& options);
#endif
#ifdef CLUSTERSIM_HAVE_CUDA
BenchResult run_cuda_benchmarks(const BenchOptions& options);
#endif

}  // namespace clustersim::calibrate
