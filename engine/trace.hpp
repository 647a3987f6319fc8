// Chrome Trace Event JSON of a simulated (or measured) timeline, as Perfetto and chrome://tracing
// open it: a process per rank, a thread per stream, a complete event per op with its FLOPs, bytes,
// group, micro-batch and chunk, flow arrows from each send to its recv, and link-utilization
// counters in a separate "network" process.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "engine/schedule.hpp"
#include "engine/timeline.hpp"
#include "engine/topology.hpp"

namespace clustersim::engine {

struct TraceOptions {
  std::vector<LinkId> counter_links;  // links whose utilization becomes a counter track
};

void write_trace(std::ostream& out, const Schedule& schedule, const Timeline& timeline,
                 const Topology& topology, const TraceOptions& options = {});

}  // namespace clustersim::engine
