// Parameter sweeps (docs/sweeps.md): the cartesian product of scenario keys, each point validated,
// then run through the front-end API (models/frontend.hpp) in parallel. `clustersim sweep` and
// its MPI executable sweep through these calls (the MPI one replaces only the PointExecutor, so a
// distributed sweep writes what a local one writes); the Python module's `sweep` returns each
// point's whole result and timeline instead, one `run` per point (docs/python.md).
//
//   SweepRequest req{.base = {.scenario = "s.yaml"}, .axes =
//   {parse_sweep_axis("parallel.tp=1,2,4")}}; const SweepResult r = run_sweep(req);
//   write_sweep_csv(r, "out.csv");
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/frontend.hpp"

namespace clustersim::models {

// One --vary: a key path and its values in the order given.
struct SweepAxis {
  std::string key;
  std::vector<std::string> values;
};

// "KEY=V1,V2,..." where each item is a value or a range: "A..B" (step 1), "A..B+S" (step S),
// "A..BxF" (times F each step, e.g. 1..256x2 = 1,2,4,...,256). ScenarioError on bad syntax.
SweepAxis parse_sweep_axis(std::string_view vary);

// A point of the product: index in the product (first axis slowest) and its value per axis.
struct SweepPoint {
  std::size_t index = 0;
  std::vector<std::string> values;
  // Run in a child process of its own (its network model, simgrid, runs once per process):
  // set by validate_sweep_point.
  bool own_process = false;
};
std::vector<SweepPoint> sweep_points(const std::vector<SweepAxis>& axes);
// The --set overrides of a point ("key=value" per axis).
std::vector<std::string> point_overrides(const std::vector<SweepAxis>& axes,
                                         const SweepPoint& point);

enum class SweepStatus { ok, invalid, failed };
std::string_view to_string(SweepStatus status);

struct SweepRow {
  std::size_t index = 0;
  std::vector<std::string> values;  // one per axis
  SweepStatus status = SweepStatus::ok;
  std::string reason;             // why invalid or failed
  nlohmann::ordered_json result;  // the result JSON's scalar keys flattened ("memory.fits")
};

struct SweepRequest {
  RunRequest base;  // scenario, --set overrides applied to every point, network model
  std::vector<SweepAxis> axes;
  unsigned jobs = 0;              // points run at once; 0 = every core
  std::vector<SweepRow> resumed;  // rows of an earlier run: kept as they are, not run again
  // (points done, points in all); called from one thread at a time.
  std::function<void(std::size_t, std::size_t)> progress;
  // Each row as it completes (validation failures first); called from one thread at a time.
  std::function<void(const SweepRow&)> on_row;
  const std::atomic<bool>* cancel = nullptr;  // stops starting new points
};

// Runs `todo` and hands every finished row to `done` (from one thread at a time). The default
// runs points on a thread pool of request.jobs threads; the MPI executable spreads them over ranks.
using PointExecutor =
    std::function<void(const SweepRequest& request, const std::vector<SweepPoint>& todo,
                       const std::function<void(SweepRow)>& done)>;

// Loads and validates one point without running it: nullopt when valid, else the reason. Sets
// point.own_process when its network model runs once per process (simgrid).
std::optional<std::string> validate_sweep_point(const SweepRequest& request, SweepPoint& point);
// Runs one point (validated or not) and returns its row; never throws for the point's own errors.
// A point marked own_process runs in a forked child (models/sweep_process.hpp): one that dies or
// exits non-zero is a `failed` row naming how.
SweepRow run_sweep_point(const SweepRequest& request, const SweepPoint& point);

struct SweepBest {
  std::string objective;  // "iteration_time_s", "tokens_per_s", "memory.headroom_bytes"
  bool minimize = false;
  std::size_t index = 0;  // of the best row
  double value = 0;
};

struct SweepResult {
  std::string scenario;
  std::vector<SweepAxis> axes;
  std::vector<SweepRow> rows;   // every point, by index
  std::vector<SweepBest> best;  // per objective, among rows that ran and fit in memory
  std::size_t resumed = 0;      // rows taken from the earlier run
};

// Validates every point first (invalid ones become rows with their reason, not run), then runs
// the rest with `executor` (default: a thread pool). Deterministic: rows by index, ties of the
// best points broken by the lowest index.
SweepResult run_sweep(const SweepRequest& request, const PointExecutor& executor = {});
std::vector<SweepBest> best_points(const std::vector<SweepRow>& rows);

// The sweep as JSON (docs/sweeps.md) and back (--resume; ScenarioError naming the file when it
// is not a sweep of these axes); a row alone for sending between MPI ranks.
nlohmann::ordered_json sweep_to_json(const SweepResult& result);
nlohmann::ordered_json row_to_json(const SweepRow& row);
SweepRow row_from_json(const nlohmann::ordered_json& json);
std::vector<SweepRow> read_sweep_rows(const std::string& path, const std::vector<SweepAxis>& axes);

// Written atomically, after check_output_path.
void write_sweep_json(const SweepResult& result, const std::string& path);
void write_sweep_csv(const SweepResult& result, const std::string& path);

}  // namespace clustersim::models
