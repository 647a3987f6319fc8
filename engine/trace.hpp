// Chrome Trace Event JSON of a simulated (or measured) timeline, as Perfetto and chrome://tracing
// open it: a process per rank, a thread per stream, a complete event per op with its FLOPs, bytes,
// group, micro-batch and chunk, flow arrows from each send to its recv, and link-utilization
// counters in a separate "network" process, and any other counter tracks the caller gives.
#pragma once

#include <algorithm>
#include <functional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "engine/schedule.hpp"
#include "engine/timeline.hpp"
#include "engine/topology.hpp"

namespace clustersim::engine {

// A counter track of any series (e.g. a rank's memory): drawn in process `pid` (a rank, or
// Schedule::num_ranks for the "network" process) as "name", with one argument `series` per point.
struct CounterTrack {
  std::string name;
  std::uint32_t pid = 0;
  std::string series = "value";
  std::vector<std::pair<Time, double>> points;
};

// The part of a run a trace keeps (--trace-ranks, --trace-from, --trace-to): the ops of the
// listed ranks (every rank when empty) that overlap [from, to], counters inside [from, to].
struct TraceFilter {
  std::vector<Rank> ranks;  // sorted, unique
  Time from = Time::zero();
  Time to = Time::max();
  bool keeps_rank(Rank r) const {
    return ranks.empty() || std::binary_search(ranks.begin(), ranks.end(), r);
  }
  bool keeps_time(Time start, Time end) const { return end >= from && start <= to; }
};

struct TraceOptions {
  std::vector<LinkId> counter_links;  // links whose utilization becomes a counter track
  std::vector<CounterTrack> counters;
  // Share of the ops written (0..1), every 65,536 ops and at the end: a 10 M-op trace takes
  // minutes, and a front end must show that it is still working. May be empty.
  std::function<void(double)> progress;
  TraceFilter filter;
  // Writers that can (the Perfetto one) compress what they write; the JSON writer ignores it.
  bool compress = true;
};

// Throws std::logic_error unless `timeline` holds each op's start (a trace needs it; a run with
// SimulationOptions::record_starts false has none).
void check_starts(const Schedule& schedule, const Timeline& timeline);

void write_trace(std::ostream& out, const Schedule& schedule, const Timeline& timeline,
                 const Topology& topology, const TraceOptions& options = {});

}  // namespace clustersim::engine
