// Perfetto's native protobuf trace of a simulated timeline (docs/outputs.md "Perfetto protobuf"):
// the same content as engine::write_trace's JSON (a process per rank, a track per stream, a
// slice per op, arrows from each send to its recv, link-utilization and other counter tracks)
// in a form Perfetto loads at sizes where JSON fails: slices as begin/end events on interned
// names, about 40 bytes per op. Op arguments (FLOPs, bytes, group) stay in the JSON trace.
#pragma once

#include <ostream>

#include "engine/schedule.hpp"
#include "engine/timeline.hpp"
#include "engine/topology.hpp"
#include "engine/trace.hpp"

namespace clustersim::models {

// Writes a Perfetto `Trace` (a stream of length-delimited `packet` fields) to `out`, keeping what
// options.filter keeps.
void write_perfetto_trace(std::ostream& out, const engine::Schedule& schedule,
                          const engine::Timeline& timeline, const engine::Topology& topology,
                          const engine::TraceOptions& options = {});

}  // namespace clustersim::models
