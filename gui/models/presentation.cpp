#include "gui/models/presentation.hpp"

#include "gui/models/prediction_tables.hpp"

namespace clustersim::gui {

const engine::Schedule& Presentation::schedule() const {
  return prediction ? prediction->output.built.schedule : trace->schedule;
}

const engine::Timeline& Presentation::op_times() const {
  return prediction ? prediction->output.timeline : trace->timeline;
}

PresentationPtr present(PredictionPtr prediction) {
  auto out = std::make_shared<Presentation>();
  const auto& output = prediction->output;
  out->timeline = TimelineStore::build(output.built.schedule, output.timeline);
  out->breakdown = breakdown_table(*prediction);
  out->memory = memory_table(*prediction);
  out->prediction = std::move(prediction);
  return out;
}

PresentationPtr present_trace(engine::TraceContents trace, const QString& path) {
  auto out = std::make_shared<Presentation>();
  out->trace = std::make_shared<const engine::TraceContents>(std::move(trace));
  out->trace_path = path;
  out->timeline = TimelineStore::build(out->trace->schedule, out->trace->timeline);
  return out;
}

}  // namespace clustersim::gui
