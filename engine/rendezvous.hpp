// Which communication ops of different ranks meet in one transfer (DESIGN.md "The schedule IR"):
// the n-th collective a rank issues on a group matches the n-th collective of every other member;
// the n-th send from a to b with tag t matches the n-th recv on b from a with tag t.
// Built once per simulation; every mismatch is reported as a SimulationError.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "engine/schedule.hpp"

namespace clustersim::engine {

struct Rendezvous {
  // One instance per collective call (all members), send/recv pair or host copy (one op).
  struct Instance {
    std::uint32_t ops_begin = 0;  // into `ops`: the member ops in group order (send, then recv)
    std::uint32_t size = 0;       // number of member ops that must arrive
    GroupId group = kNone;        // kNone for a send/recv pair or a host copy
    bool send_recv() const { return group == kNone && size == 2; }
  };
  std::vector<Instance> instances;
  std::vector<OpId> ops;
  std::vector<std::uint32_t> instance_of;  // per OpId; kNone for compute and device copy ops
};

// `progress`, when set, gets the share of the matching done (the one scan of the communication
// ops ends at 0.5, reporting as it passes each further 65,536 op ids; the pairing at 1); it may
// throw to stop.
Rendezvous match_communication(const Schedule& schedule,
                               const std::function<void(double)>& progress = {});
// The same, but each communication op's instance goes into `instance_of` (one entry per op,
// the other entries left as they are) and Rendezvous::instance_of stays empty: the simulator
// writes its GPU ops' entries of the same array meanwhile, on another thread.
Rendezvous match_communication(const Schedule& schedule, std::span<std::uint32_t> instance_of,
                               const std::function<void(double)>& progress = {});

}  // namespace clustersim::engine
