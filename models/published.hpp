// Published figures a scenario may carry (the top-level `published:` list of validation cases,
// validation/README.md): what a real run measured, with its source. They do not change the
// simulation; `clustersim validate` compares them with it (models/validation.hpp).
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace clustersim::models {

struct PublishedFigure {
  std::string metric;  // a name of published_metrics()
  double value = 0;    // in the metric's unit
  std::string source;  // document, table, row: where the figure is printed
  std::string url;
  std::string notes;  // what the source says of the setup, what was assumed
};

// A figure a source may state, and its unit.
struct PublishedMetric {
  std::string_view name;
  std::string_view unit;
  std::string_view kind;  // "time" (iteration time, throughput, FLOP/s) or "memory"
  std::string_view meaning;
};
std::span<const PublishedMetric> published_metrics();
const PublishedMetric* find_published_metric(std::string_view name);

}  // namespace clustersim::models
