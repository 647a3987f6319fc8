// Everything the views show of one run, built on the worker thread with the run itself, so that
// a 15 M-op prediction does not freeze the window while its timeline store and tables are built.
// A trace opened from a file (clustersim run --trace) is shown the same way, timeline only.
#pragma once

#include <QString>
#include <memory>

#include "engine/trace_reader.hpp"
#include "gui/models/run_controller.hpp"
#include "gui/models/segment_table.hpp"
#include "gui/models/timeline_store.hpp"

namespace clustersim::gui {

struct Presentation {
  PredictionPtr prediction;                            // null for a trace opened from a file
  std::shared_ptr<const engine::TraceContents> trace;  // that trace, else null
  QString trace_path;
  TimelineStore timeline;
  SegmentTable breakdown;  // empty for a trace
  SegmentTable memory;

  // The ops and their times, the prediction's or the trace's.
  const engine::Schedule& schedule() const;
  const engine::Timeline& op_times() const;
};
using PresentationPtr = std::shared_ptr<const Presentation>;

PresentationPtr present(PredictionPtr prediction);
PresentationPtr present_trace(engine::TraceContents trace, const QString& path);

}  // namespace clustersim::gui
