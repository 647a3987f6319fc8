#include "gui/models/presentation.hpp"

#include "gui/models/prediction_tables.hpp"

namespace clustersim::gui {

PresentationPtr present(PredictionPtr prediction) {
  auto out = std::make_shared<Presentation>();
  const auto& output = prediction->output;
  out->timeline = TimelineStore::build(output.built.schedule, output.timeline);
  out->breakdown = breakdown_table(*prediction);
  out->memory = memory_table(*prediction);
  out->prediction = std::move(prediction);
  return out;
}

}  // namespace clustersim::gui
