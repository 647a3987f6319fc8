#include "engine/trace.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "engine/rendezvous.hpp"

namespace clustersim::engine {

namespace {

using nlohmann::ordered_json;

// Trace timestamps are microseconds; picoseconds keep six decimals exact.
double micros(Time t) {
  return static_cast<double>(t.ps()) / 1e6;
}

class Writer {
 public:
  explicit Writer(std::ostream& out) : out_(out) { out_ << "{\"traceEvents\":[\n"; }
  void event(const ordered_json& e) {
    if (!first_) out_ << ",\n";
    first_ = false;
    out_ << e.dump();
  }
  void close() { out_ << "\n],\"displayTimeUnit\":\"ns\"}\n"; }

 private:
  std::ostream& out_;
  bool first_ = true;
};

void write_metadata(Writer& w, const Schedule& s, std::uint32_t network_pid,
                    const TraceFilter& filter) {
  for (std::uint32_t r = 0; r < s.num_ranks; ++r) {
    // Folded: its lanes would be those of its mirror.
    if (!s.simulated(r) || !filter.keeps_rank(r)) continue;
    w.event({{"name", "process_name"},
             {"ph", "M"},
             {"pid", r},
             {"args", {{"name", "rank " + std::to_string(r)}}}});
    w.event(
        {{"name", "process_sort_index"}, {"ph", "M"}, {"pid", r}, {"args", {{"sort_index", r}}}});
    for (std::size_t t = 0; t < s.stream_names.size(); ++t)
      w.event({{"name", "thread_name"},
               {"ph", "M"},
               {"pid", r},
               {"tid", t},
               {"args", {{"name", s.stream_names[t]}}}});
  }
  w.event({{"name", "process_name"},
           {"ph", "M"},
           {"pid", network_pid},
           {"args", {{"name", "network"}}}});
}

ordered_json op_args(const Schedule& s, const Timeline& tl, OpId id) {
  const Op& op = s.ops[id];
  ordered_json args = {{"op", id}, {"kind", to_string(op.kind)}};
  if (op.kind == OpKind::compute) args["flops"] = s.flops(op);
  args["bytes"] = op.bytes;
  if (op.kind == OpKind::collective) {
    args["collective"] = to_string(op.collective);
    args["group"] = s.groups[op.group_or_peer].name;
    args["algorithm"] = to_string(tl.algorithm[id]);
    if (id < tl.protocol.size()) {
      args["protocol"] = to_string(tl.protocol[id]);
      args["channels"] = tl.channels[id];
    }
  } else if (op.kind == OpKind::send || op.kind == OpKind::recv) {
    args[op.kind == OpKind::send ? "to" : "from"] = op.group_or_peer;
    args["tag"] = op.tag();
    if (id < tl.channels.size()) args["channels"] = tl.channels[id];
    // The group whose communicator it was posted on (absent: a communicator of the pair).
    if (const GroupId comm = s.send_group(op); comm != kNone) args["comm"] = s.groups[comm].name;
  } else if (op.kind == OpKind::copy) {
    args["direction"] = kCopyDirectionNames.name(static_cast<CopyDirection>(op.tag()));
  }
  if (op.microbatch() != kNone) args["microbatch"] = op.microbatch();
  if (op.chunk() != kNone) args["chunk"] = op.chunk();
  return args;
}

}  // namespace

void check_starts(const Schedule& schedule, const Timeline& timeline) {
  if (timeline.start.size() != schedule.ops.size())
    throw std::logic_error("a trace needs each op's start, and the run recorded " +
                           std::to_string(timeline.start.size()) + " of " +
                           std::to_string(schedule.ops.size()) +
                           " (SimulationOptions::record_starts)");
}

void write_trace(std::ostream& out, const Schedule& s, const Timeline& tl, const Topology& topo,
                 const TraceOptions& options) {
  check_starts(s, tl);
  Writer w(out);
  const std::uint32_t network_pid = s.num_ranks;
  const TraceFilter& filter = options.filter;
  write_metadata(w, s, network_pid, filter);

  constexpr OpId kReportEvery = 65'536;
  const OpStore::Reader in_order = s.ops.reader();
  for (OpId id = 0; id < s.ops.size(); ++id) {
    if (options.progress && id % kReportEvery == 0)
      options.progress(static_cast<double>(id) / static_cast<double>(s.ops.size()));
    const Op op = in_order[id];
    if (!filter.keeps_rank(op.rank) || !filter.keeps_time(tl.start[id], tl.end[id])) continue;
    w.event({{"name", s.label(op)},
             {"cat", to_string(op.category)},
             {"ph", "X"},
             {"ts", micros(tl.start[id])},
             {"dur", micros(tl.end[id] - tl.start[id])},
             {"pid", op.rank},
             {"tid", op.stream},
             {"args", op_args(s, tl, id)}});
  }
  // Flow arrows from each send to its recv; they bind to the enclosing slices at both ends.
  const Rendezvous matched = match_communication(s);
  std::uint64_t flow_id = 0;
  for (const auto& inst : matched.instances) {
    if (!inst.send_recv()) continue;
    const OpId snd_id = matched.ops[inst.ops_begin];
    const Op& snd = s.ops[snd_id];
    const OpId rcv_id = matched.ops[inst.ops_begin + 1];
    const Op& rcv = s.ops[rcv_id];
    // An arrow needs both its slices in the trace.
    if (!filter.keeps_rank(snd.rank) || !filter.keeps_rank(rcv.rank) ||
        !filter.keeps_time(tl.start[snd_id], tl.end[snd_id]) ||
        !filter.keeps_time(tl.start[rcv_id], tl.end[rcv_id]))
      continue;
    const auto cat = to_string(snd.category);
    w.event({{"name", "p2p"},
             {"cat", cat},
             {"ph", "s"},
             {"id", flow_id},
             {"ts", micros(tl.start[matched.ops[inst.ops_begin]])},
             {"pid", snd.rank},
             {"tid", snd.stream}});
    w.event({{"name", "p2p"},
             {"cat", cat},
             {"ph", "f"},
             {"bp", "e"},
             {"id", flow_id},
             {"ts", micros(tl.end[rcv_id])},
             {"pid", rcv.rank},
             {"tid", rcv.stream}});
    ++flow_id;
  }

  std::vector<bool> wanted(topo.num_links(), false);
  for (LinkId l : options.counter_links)
    wanted[l] = true;
  for (const LinkRateSample& sample : tl.link_rates) {
    if (!wanted[sample.link] || !filter.keeps_time(sample.time, sample.time)) continue;
    const double capacity = topo.link(sample.link).bandwidth.bytes_per_second();
    w.event({{"name", "util " + topo.link(sample.link).name},
             {"ph", "C"},
             {"ts", micros(sample.time)},
             {"pid", network_pid},
             {"args", {{"utilization", sample.bytes_per_second / capacity}}}});
  }
  for (const CounterTrack& track : options.counters) {
    if (track.pid != network_pid && !filter.keeps_rank(track.pid)) continue;
    for (const auto& [time, value] : track.points) {
      if (!filter.keeps_time(time, time)) continue;
      w.event({{"name", track.name},
               {"ph", "C"},
               {"ts", micros(time)},
               {"pid", track.pid},
               {"args", {{track.series, value}}}});
    }
  }
  w.close();
  if (options.progress) options.progress(1.0);
}

}  // namespace clustersim::engine
