// From a timeline to the figures users plan with (DESIGN.md "Result JSON"): iteration time,
// throughput, TFLOP/s and MFU, where the critical rank's time goes, exposed communication, the
// pipeline bubble, the busiest links and memory.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "engine/timeline.hpp"
#include "engine/topology.hpp"
#include "models/memory_model.hpp"
#include "models/offload.hpp"
#include "models/plans/training_schedule.hpp"
#include "models/scenario.hpp"

namespace clustersim::models {

struct LinkUsage {
  std::string name;
  std::string kind;
  double bytes = 0;        // per iteration
  double bandwidth = 0;    // bytes/s per direction
  double utilization = 0;  // bytes / (bandwidth × iteration time)
};

// Seconds of one iteration of the critical rank, each instant attributed once: compute
// (forward, backward, optimizer) first, then recompute, then communication in flight (split
// evenly between kinds in flight together), else idle (waiting on other ranks).
struct TimeBreakdown {
  double compute = 0, recompute = 0, dp_comm = 0, tp_comm = 0, pp_comm = 0, ep_comm = 0,
         cp_comm = 0, idle = 0;
};

struct Result {
  std::string scenario;
  int world_size = 0;
  double iteration_time_s = 0;
  double tokens_per_s = 0;
  double samples_per_s = 0;
  double tflops_per_gpu = 0;   // executed FLOPs (recompute included) per GPU per second / 1e12
  double mfu = 0;              // model FLOPs (no recompute) / (time × GPUs × peak)
  double bubble_fraction = 0;  // idle share of the critical rank
  struct {
    double dp = 0, tp = 0, pp = 0, ep = 0, cp = 0, total = 0;
  } exposed_comm_s;
  double comm_overlap_fraction = 0;  // share of communication time hidden behind compute
  MemoryEstimate memory;
  TimeBreakdown breakdown_s;
  engine::Rank critical_rank = 0;
  OffloadActivity offload;       // the critical rank's host copies and CPU step (parallel.offload)
  std::vector<LinkUsage> links;  // busiest first
  std::vector<engine::LinkId> busiest_link_ids;
  // Things the user should know about how the figures were made: warnings about the plan (a TP
  // group spanning nodes) and which figures came from a calibration profile.
  std::vector<std::string> notes;
  std::string network_model;
  // A workload of Chakra traces (Scenario::workload): no batch, model or plan, so tokens_per_s,
  // samples_per_s, mfu and memory are unknown (null in the result JSON), not zero.
  bool from_traces = false;
  std::uint64_t events = 0;
  double wall_s = 0;
};

Result compute_metrics(const Scenario& scenario, const BuiltSchedule& built,
                       const engine::Timeline& timeline, const engine::Topology& topology,
                       std::size_t max_links = 10,
                       const std::function<void(double)>& progress = {});

// Every rank's iteration attributed as breakdown_s is for the critical rank (index: rank); the
// GUI's breakdown view draws it.
std::vector<TimeBreakdown> breakdown_per_rank(const Scenario& scenario,
                                              const engine::Schedule& schedule,
                                              const engine::Timeline& timeline);

}  // namespace clustersim::models
