// What a real execution of a schedule measured (docs/execution.md), and how it becomes the same
// outputs a simulation gives: a Timeline, the result JSON (plus per-op times) and a trace with the
// simulated trace's lanes. Needs no GPU or MPI library: the back ends (calibrate/mpi/executor.hpp,
// calibrate/cuda/) fill an Execution and the writers here do the rest.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/schedule.hpp"
#include "engine/timeline.hpp"
#include "models/frontend.hpp"

namespace clustersim::calibrate {

// What `clustersim execute` was asked to do; every back end takes these.
struct ExecuteOptions {
  std::string scenario;
  std::vector<std::string> overrides;  // "key.path=value", as --set
  int iterations = 3;                  // measured runs of the schedule
  int warmup = 1;                      // runs before them, discarded
  double work_scale = 1.0;             // executed FLOPs and bytes = the schedule's × this
  double op_timeout_s = 60.0;          // watchdog: longest an op may wait before the job ends
  std::string json_out;
  std::string trace_out;
};

// One op's measured interval, seconds on rank 0's clock from the start of its run.
struct OpTimes {
  double start_s = 0;
  double end_s = 0;
};

struct ExecutionInfo {
  std::string backend;  // "mpi" or "cuda"
  std::string device;   // "cpu (Eigen fp32, 1 thread per rank)", a GPU's name
  std::uint32_t ranks = 0;
  std::uint32_t hosts = 0;
  int iterations = 1;         // measured runs of the schedule
  int warmup = 0;             // runs before them, discarded
  double work_scale = 1.0;    // executed FLOPs and bytes = the schedule's × work_scale
  std::string compute_dtype;  // what compute ran in ("fp32" on the CPU), whatever the scenario's
  double op_timeout_s = 0;    // the watchdog's limit per op
  std::vector<double> clock_offsets_s;  // per rank: its clock minus rank 0's
  std::vector<double> run_makespans_s;  // each measured run, in order
  std::size_t representative_run = 0;   // the run (median makespan) whose op times are reported
  std::uint64_t values_checked = 0;     // communication results compared with the expected values
  std::uint64_t values_wrong = 0;
};

struct Execution {
  ExecutionInfo info;
  std::vector<OpTimes> ops;  // indexed by OpId: the representative run
};

// The measured timeline: each op's start and end; a communication op's launch is the start of the
// last of its matching ops (the n-th collective of every member of its group, or its send/recv
// peer), as the simulator defines it.
engine::Timeline measured_timeline(const engine::Schedule& schedule,
                                   const std::vector<OpTimes>& ops, std::size_t num_links);

// The prediction with its timeline and result replaced by the measured ones (metrics computed
// from the measured timeline by the same code as the simulation's).
models::Prediction measured_prediction(const models::Prediction& predicted,
                                       const Execution& execution);

// The result JSON schema of `clustersim run --json`, plus "execution" (ExecutionInfo) and "ops":
// per op its id, rank, stream, label, kind, category, predicted and measured start/end, the
// measured launch (communication: when the last peer arrived), bytes, and FLOPs (compute) or
// collective type and group shape (collectives).
nlohmann::ordered_json execution_to_json(const models::Prediction& predicted,
                                         const models::Prediction& measured,
                                         const Execution& execution);

// One op as the "ops" entries of execution_to_json start: id, rank, stream, label, kind, category
// and its predicted start/end; the caller adds the measured times.
nlohmann::ordered_json op_json(const engine::Schedule& schedule, engine::OpId id,
                               const engine::Timeline& predicted);

// Writes the JSON and trace atomically (after models::check_output_path); empty paths are skipped.
void write_execution(const models::Prediction& predicted, const Execution& execution,
                     const std::string& json_path, const std::string& trace_path);

}  // namespace clustersim::calibrate
