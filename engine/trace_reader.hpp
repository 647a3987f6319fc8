// Reads back the Chrome Trace Event JSON that write_trace() writes (docs/outputs.md "Chrome Trace
// Event JSON"), so that a front end can show a run without simulating it again: its ranks,
// streams and ops (label, category, start, duration and the arguments the trace keeps) as a
// Schedule and a Timeline.
//
// What a trace does not keep stays empty or is guessed plainly: no dependencies, no link bytes;
// launch = start (the time a communication op waited for its peers is not in the trace); a
// process group holds the ranks whose ops name it, in increasing order; a collective's root is 0.
// The text is read as it streams, through nlohmann-json's SAX parser (each event's members
// straight into its op, no document built), and the ops go into their final arrays as they come
// (engine/trace_assembly.hpp), so memory grows with the ops kept, not with the text. JSON is the
// slow format to read back: for the largest runs open the .pftrace, which reads faster than the
// run simulates where the JSON does not (docs/performance.md "Reading traces back"). Perfetto's
// protobuf traces have their reader beside their writer, in models/perfetto
// (perfetto_reader.hpp), and come back into the same TraceContents.
#pragma once

#include <cstdint>
#include <functional>
#include <istream>
#include <stdexcept>
#include <string>

#include "engine/schedule.hpp"
#include "engine/timeline.hpp"

namespace clustersim::engine {

// A file that is not such a trace: the message names the source and what is wrong with it
// ("t.json: traceEvents[12].dur: expected a number").
class TraceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct TraceContents {
  Schedule schedule;
  Timeline timeline;
};

struct TraceReadOptions {
  // The stream's length in bytes, for progress; 0 when unknown.
  std::uint64_t size_bytes = 0;
  // Called every 65,536 events (or packets) with the share of the bytes read (0..1; -1 when the
  // size is unknown); it may throw to stop reading (a cancelled load), and what it throws comes
  // out of the reader as it is.
  std::function<void(double)> progress;
};

// `source` names the trace in messages (its path). Throws TraceError.
TraceContents read_trace(std::istream& in, const std::string& source,
                         const TraceReadOptions& options = {});

}  // namespace clustersim::engine
