// The discrete-event simulator: runs a Schedule on a Topology with a NetworkModel and a
// ComputeModel and records when every op started and ended.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <vector>

#include "engine/compute_model.hpp"
#include "engine/network/collectives.hpp"
#include "engine/network/network_model.hpp"
#include "engine/schedule.hpp"
#include "engine/timeline.hpp"
#include "engine/topology.hpp"

namespace clustersim::engine {

// A schedule that cannot run: mismatched collectives, unmatched send/recv, or a deadlock.
class SimulationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The run would last longer than the simulated clock holds (64-bit picoseconds, about 106 days):
// an op or a transfer so slow, or so many of them, that the time would wrap around. The message
// names the op. The figures that make it so slow come from the input, so it is bad input.
class ClockOverflow : public SimulationError {
 public:
  using SimulationError::SimulationError;
};

// A folded run checked by the network (SimulationOptions::carry_replica_images) whose replicas
// did not keep step: an image of a transfer ended at another instant than the transfer it copies,
// because its traffic met other contention. The message names the transfer; run every rank.
class FoldNotExact : public SimulationError {
 public:
  using SimulationError::SimulationError;
};

// Thrown by simulate() when its cancel flag was set.
class Cancelled : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct SimulationOptions {
  AlgorithmOverrides algorithms = no_overrides();
  // Called now and then with the fraction of ops finished (0..1); may be empty.
  std::function<void(double)> progress;
  // Called while the communication ops are matched to each other, before the first event, with
  // the share matched (0..1); may be empty. The matching of a 10-million-op schedule takes
  // seconds, which used to show as "simulating 0 %".
  std::function<void(double)> matching_progress;
  // Checked as often as progress is reported; when set, simulate() throws Cancelled.
  const std::atomic<bool>* cancel = nullptr;
  // Record link-rate changes into Timeline::link_rates (for trace counters).
  bool record_link_rates = false;
  // Record each op's start into Timeline::start (traces, the GUI, Python read it); when false it
  // is left empty, 8 bytes per op less (0.12 GB on GPT-3 175B), and every other field is the
  // same. Aggregates need no start: a GPU op's or host copy's equals its launch.
  bool record_starts = true;
  // A folded schedule (Schedule::mirror) under a network model with contention: start, beside
  // each transfer inside the simulated replica, its copy on every other replica (its images,
  // engine/replica_images.hpp), so that the links carry every replica's traffic, and check that
  // each image ends when its original does. Then every replica keeps step with the simulated one
  // and the run is the whole run; otherwise simulate() throws FoldNotExact. Ignored unfolded.
  bool carry_replica_images = false;
};

// Rank r runs on GPU endpoint r of the topology.
Timeline simulate(const Schedule& schedule, const Topology& topology, NetworkModel& network,
                  const ComputeModel& compute, const SimulationOptions& options = {});

}  // namespace clustersim::engine
