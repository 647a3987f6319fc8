// Everything the views show of one run, built on the worker thread with the run itself, so that
// a 15 M-op prediction does not freeze the window while its timeline store and tables are built.
#pragma once

#include <memory>

#include "gui/models/run_controller.hpp"
#include "gui/models/segment_table.hpp"
#include "gui/models/timeline_store.hpp"

namespace clustersim::gui {

struct Presentation {
  PredictionPtr prediction;
  TimelineStore timeline;
  SegmentTable breakdown;
  SegmentTable memory;
};
using PresentationPtr = std::shared_ptr<const Presentation>;

PresentationPtr present(PredictionPtr prediction);

}  // namespace clustersim::gui
