// Reads back the Perfetto protobuf trace that write_perfetto_trace() writes (docs/outputs.md
// "Perfetto protobuf"), so that clustersim-gui shows a `.pftrace` as it shows a Chrome JSON
// trace: into the same engine::TraceContents as engine::read_trace (engine/trace_reader.hpp).
//
// Restored: ranks (the processes' pids; the `network` process's pid is the rank count), streams
// (each rank's child tracks, numbered in file order), and per op its label, category and kind,
// start and end (whole nanoseconds: the file's resolution), a collective's type and group (a
// group holds the ranks whose ops name it) and a send's or recv's peer; a matched send and recv
// share a tag (their arrow's id). Not in the file, so not restored: FLOPs, bytes, the
// micro-batch and bucket apart from the label, algorithm, protocol, channels, dependencies.
//
// A Trace is a repeated TracePacket (field 1), so the file is read one length-delimited packet at
// a time with the generated classes (models/perfetto/perfetto_trace.proto): memory grows with the
// ops, not with the file.
#pragma once

#include <istream>
#include <string>

#include "engine/trace_reader.hpp"

namespace clustersim::models {

// `source` names the trace in messages (its path). Throws engine::TraceError naming the source
// and what is wrong: not a protobuf, not a Perfetto trace, not one clustersim wrote, cut short.
engine::TraceContents read_perfetto_trace(std::istream& in, const std::string& source,
                                          const engine::TraceReadOptions& options = {});

}  // namespace clustersim::models
