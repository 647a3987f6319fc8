// What a simulation (or a real execution) produced: when each op ran and what each link carried.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/network/transfer_plan.hpp"
#include "engine/schedule.hpp"
#include "engine/topology.hpp"
#include "engine/units.hpp"

namespace clustersim::engine {

struct LinkRateSample {
  LinkId link;
  Time time;
  double bytes_per_second;
};

struct Timeline {
  std::vector<Time> start;  // indexed by OpId
  std::vector<Time> end;
  // When the op's work could begin: its start for compute, the moment the last peer arrived for
  // communication (before that the rank only waits).
  std::vector<Time> launch;
  std::vector<double> link_bytes;          // indexed by LinkId
  std::vector<LinkRateSample> link_rates;  // only when SimulationOptions::record_link_rates
  std::vector<Algorithm> algorithm;        // per OpId: the algorithm a communication op used
  std::vector<Protocol> protocol;          // per OpId: its NCCL protocol (LL, LL128, Simple)
  std::vector<std::uint16_t> channels;     // per OpId: its channel count (0 for compute)
  // Per rank: how much longer its compute ran than it would have on the whole GPU, for the SMs
  // overlapping communication held (engine/sm_sharing.hpp); empty when that is not modelled.
  std::vector<Time> sm_sharing_delay;
  Time makespan;
  std::uint64_t events = 0;
};

}  // namespace clustersim::engine
