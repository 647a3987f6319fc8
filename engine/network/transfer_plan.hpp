// A collective (or a send/recv pair) as the network sees it: phases that run one after the other.
// In each phase a fixed latency elapses first, then all of the phase's flows run concurrently;
// the phase ends when its last flow ends. Bytes are given per byte of collective payload, so one
// plan serves every message size on the same group (see collectives.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/schedule.hpp"
#include "engine/topology.hpp"
#include "engine/units.hpp"

namespace clustersim::engine {

struct FlowSpec {
  EndpointId src = 0;
  EndpointId dst = 0;
  double bytes_per_payload_byte = 0.0;  // flow bytes = this × collective payload bytes
};

struct Phase {
  Time latency;  // the algorithm's latency term for this phase (steps × per-step latency)
  std::vector<FlowSpec> flows;
};

struct TransferPlan {
  std::vector<Phase> phases;
  // What the plan carries out, so a calibration profile can be looked up by (type, group shape);
  // ranks == 0 for hand-built plans, which never take a profile's figures.
  CollectiveType collective = CollectiveType::send_recv;
  std::uint32_t ranks = 0;
  std::uint32_t nodes = 0;
};

}  // namespace clustersim::engine
