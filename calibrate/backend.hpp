// The one backend interface of `clustersim calibrate` (DESIGN.md "Folders and layers"): each
// backend runs its microbenchmarks and returns raw measurements; calibrate() fits them. This file
// and everything it declares need no GPU or MPI library: the CUDA and MPI backends
// (calibrate/cuda/cuda_backend.hpp, calibrate/mpi/mpi_backend.hpp) compile only when found, into
// their own libraries linked only by their own executables, clustersim-calibrate-cuda and
// clustersim-calibrate-mpi (docs/calibration.md "Backends"), so `clustersim` loads none of them.
#pragma once

#include <functional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

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
  // GEMMs to measure besides the grid (a scenario's, `--shapes-from`); backends without a GEMM
  // sweep refuse them.
  std::vector<GemmRequest> gemm_shapes;
};

struct BenchResult {
  Provenance provenance;
  Measurements measurements;
  bool writer = true;  // false on MPI ranks other than 0: they measure but write nothing
};

// A backend: runs its microbenchmarks. Throws BackendUnavailable, Cancelled or std::runtime_error.
using BackendFn = BenchResult (*)(const BenchOptions&);

// Runs the backend and fits; `writer` says whether this process should write the profile.
struct Calibration {
  Profile profile;
  bool writer = true;
};
Calibration calibrate(BackendFn backend, const BenchOptions& options);

// Prints one nccl-tests-like row ("size count type time algbw busbw #wrong") and its header.
void print_collective_header(std::ostream& out, std::string_view collective, std::uint32_t ranks);
void print_collective_row(std::ostream& out, const CollectiveMeasurement& m);

}  // namespace clustersim::calibrate
